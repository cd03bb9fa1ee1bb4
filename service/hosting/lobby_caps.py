"""The lobby's caps per client address: the seats it may hold at once in listed
games (``LOBBY_SEATS_PER_ADDRESS``) and the listed games it may have waiting for
players (``LOBBY_LISTED_PER_ADDRESS``), so that one client cannot take every
open seat of the lobby nor fill its listing.

The client is its address as the rate limits know it (the API passes
:func:`service.api.limits.by_address`); unlike them the caps stay on with
``RATE_LIMITS=false`` (per-client limits at a load balancer cannot count seats), and
a cap of 0 is none.  What counts:

* a seat taken in a **listed** game (by its create, a join by id, a quick-join),
  while the game waits for players (and is still in the lobby) or is in play,
  and its player has not left or resigned.  Seats of unlisted games (invite
  links, rematches) never count;
* a listed game of its own, while it waits for players and is in the lobby: one
  made by ``POST /v1/games``, or one a quick-join of it listed (the quick-join
  that found no seat to take and opened a new table).  At that cap a quick-join
  still takes a seat in a game others listed, and is refused only when it would
  have to list a new one.

A seat is held by its occupant: the member names the seat's token (a prefix of
its hash), so a seat left from another address (whose leave cannot give back the
first address's hold), then taken by someone else, is found not held at the cap.

A request holds its place (:class:`Hold`) before its game's write, atomically
against the cap, and gives it back if the request fails; leaving and resigning
give the seat back at once (:func:`let_go`).  Nothing has to give back a seat
whose game finished or expired, nor a listed game that filled: an address at
the cap first has each game it holds checked (:func:`_heal`), and what no game
holds any more stops counting.  So a refusal is always decided on the games'
own state, whatever hint was lost on the way.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Sequence
from typing import Any

import orjson

from service.config import Config
from service.hosting.record import GameRecord, seat_holders
from service.hosting.refusals import LobbyCapError
from service.store import GameStore, StoreUnavailable
from service.store.holds import Refusal

log = logging.getLogger(__name__)

PLACEHOLDER_SECONDS = 60
"""How long a quick-join's place, held before it knows its game, counts at most
(its request's own life, with room)."""


def _caps(config: Config) -> tuple[int, int] | None:
    """(most seats, most listed games) per address; None when no cap applies."""
    if not config.lobby_seats_per_address and not config.lobby_listed_per_address:
        return None
    return config.lobby_seats_per_address, config.lobby_listed_per_address


HOLDER_CHARS = 16
"""Characters of a seat token's hash that name its holder in a hold."""


def seat_member(record: GameRecord, seat: int) -> str:
    """How an address's hold on ``seat`` of ``record`` is kept: the game, the seat,
    the game's creation (ms), by which a waiting game leaves the lobby, and the
    seat's holder (the start of its token's hash), so that the hold lapses when
    the seat changes hands."""
    holder = (record.seats[seat].token_hash or "")[:HOLDER_CHARS]
    return f"{record.id}:{seat}:{int(record.created_at * 1000)}:{holder}"


class Hold:
    """What one request holds against its address's caps: taken (:meth:`take`)
    before its game's write, replaced by a later :meth:`take` (a write retried
    on a fresher game may pick another seat), given back by :meth:`release`
    when the request fails.  ``address`` is the client's, as the rate limits
    name it."""

    def __init__(self, store: GameStore, config: Config, address: str) -> None:
        self._store = store
        self._config = config
        self._caps = _caps(config)
        self._address = address
        self._seats: list[str] = []
        self._listed: str | None = None
        self._refused_listing: Refusal | None = None

    def take(self, seats: Sequence[str], listed: tuple[str, float] | None = None) -> None:
        """Hold ``seats`` (members: :func:`seat_member`) and the listed game
        ``listed`` (id, when it leaves the lobby) instead of what this request held
        so far; :class:`LobbyCapError` over a cap, with nothing changed."""
        refusal = self._change(seats, listed)
        if refusal is not None:
            raise self._refused(refusal, len([m for m in seats if m not in self._seats]))

    def _change(self, seats: Sequence[str], listed: tuple[str, float] | None) -> Refusal | None:
        if self._caps is None:
            return None
        most_seats, most_listed = self._caps
        now = time.time()
        until = now + self._config.game_ttl_seconds
        add = [(m, now + PLACEHOLDER_SECONDS if m[0] == "?" else until) for m in seats]
        refusal = None
        for attempt in range(2):
            refusal = self._store.holds.change(
                self._address,
                most_seats=most_seats,
                most_listed=most_listed,
                add_seats=add,
                drop_seats=self._seats,
                add_listed=listed,
                drop_listed=self._listed,
            )
            if refusal is None:
                self._seats, self._listed = list(seats), None if listed is None else listed[0]
                return None
            if attempt == 0 and not _heal(self._store, self._config, self._address):
                break
        return refusal

    def take_place(self) -> None:
        """Hold a place for a seat not known yet (a quick-join's, before its seek),
        and one for a listed game, if the address may list one more (else
        :attr:`may_list` is False: the quick-join may only take a seat others
        listed)."""
        seat = "?" + secrets.token_hex(8)
        listing = ("?" + secrets.token_hex(8), time.time() + PLACEHOLDER_SECONDS)
        refusal = self._change([seat], listing)
        if refusal is not None and refusal.cap == "listed":
            self._refused_listing = refusal
            refusal = self._change([seat], None)
        if refusal is not None:
            raise self._refused(refusal, 1)

    @property
    def may_list(self) -> bool:
        """Whether this request may list a new game (see :meth:`take_place`)."""
        return self._refused_listing is None

    def listing_refused(self) -> LobbyCapError:
        """The refusal of a quick-join that would have to list a game past the cap."""
        assert self._refused_listing is not None
        return self._refused(self._refused_listing, 0)

    def take_seat(self, record: GameRecord, seat: int, lists: bool = False) -> None:
        """Hold ``seat`` of ``record``, if it is a listed game; ``lists``: and the
        game itself, listed by this request (a quick-join's new table)."""
        if not record.listed:
            return
        listed = (record.id, _leaves(self._config, record)) if lists else None
        self.take([seat_member(record, seat)], listed)

    def take_new_game(self, record: GameRecord) -> None:
        """Hold a new listed game and its seats taken by its creator."""
        if not record.listed:
            return
        seats = [seat_member(record, s.seat) for s in record.seats if s.token_hash is not None]
        self.take(seats, (record.id, _leaves(self._config, record)))

    def release(self) -> None:
        """Give back what this request holds (its request failed); a store that
        fails now leaves it to expire, or to be found not held at the cap."""
        if self._caps is None or (not self._seats and self._listed is None):
            return
        try:
            listed = [] if self._listed is None else [self._listed]
            self._store.holds.drop(self._address, self._seats, listed)
        except StoreUnavailable as exc:
            log.warning("lobby hold not given back: %s", exc)
        self._seats, self._listed = [], None

    def _refused(self, refusal: Refusal, asked: int) -> LobbyCapError:
        assert self._caps is not None
        most_seats, most_listed = self._caps
        if refusal.cap == "seats" and asked > most_seats:
            detail = (
                f"lobby limit: this request asks for {asked} seats in listed games, more "
                f"than an address may hold ({most_seats}); list a game with fewer players"
            )
        elif refusal.cap == "seats":
            detail = (
                f"lobby limit: this address holds {refusal.held} seats in listed games, the "
                f"most it may ({most_seats}); finish, resign or leave one first"
            )
        else:
            detail = (
                f"lobby limit: this address has {refusal.held} listed games waiting for "
                f"players, the most it may ({most_listed}); wait for one to fill, or leave "
                "it, first"
            )
        return LobbyCapError(detail)


def _leaves(config: Config, record: GameRecord) -> float:
    """When a waiting game leaves the lobby."""
    return record.created_at + config.lobby_waiting_seconds


def let_go(store: GameStore, config: Config, address: str, record: GameRecord, member: str) -> None:
    """After a leave or a resign: the request's ``address`` holds the seat of
    ``record`` whose member (:func:`seat_member`, taken before the seat was
    given up) is ``member`` no more, nor the game if it was cancelled.  A leave
    from another address than the seat's gives back nothing here: the seat's
    new holder, if any, is not the hold's, which then lapses at the cap."""
    if not record.listed or _caps(config) is None:
        return
    listed = [record.id] if record.cancelled else []
    try:
        store.holds.drop(address, [member], listed)
    except StoreUnavailable as exc:
        log.warning("lobby hold not given back: %s", exc)


def _heal(store: GameStore, config: Config, address: str) -> bool:
    """Check every game ``address`` holds against the game itself and drop what it
    holds no more; whether anything was dropped."""
    held = store.holds.held(address)
    seats = [(m, m.split(":")) for m in held.seats if not m.startswith("?")]
    listed = [game for game in held.listed if not game.startswith("?")]
    ids = sorted({parts[0] for _m, parts in seats} | set(listed))
    states: dict[str, tuple[dict[str, Any], list[str | None]] | None] = {}
    for game_id, state in zip(ids, store.lobby.states(ids), strict=True):
        states[game_id] = (
            None if state is None else (orjson.loads(state[0]), seat_holders(state[1]))
        )
    waiting_seconds = config.lobby_waiting_seconds
    stale_seats = [
        member
        for member, parts in seats
        if not _holds_seat(states[parts[0]], parts, waiting_seconds)
    ]
    stale_listed = [game for game in listed if not _in_lobby(states[game])]
    store.holds.drop(address, stale_seats, stale_listed)
    return bool(stale_seats or stale_listed)


def _holds_seat(
    state: tuple[dict[str, Any], list[str | None]] | None, parts: list[str], waiting_seconds: int
) -> bool:
    """Whether a seat member (``[game, seat, created ms, holder]``) still counts: its
    game waits for players in the lobby or is in play, and the seat's player is
    the member's still (the same token) and did not resign."""
    if state is None or len(parts) != 4:
        return False
    public, holders = state
    if public["status"] not in ("waiting", "playing"):
        return False
    seat, created = int(parts[1]), int(parts[2]) / 1000
    if public["status"] == "waiting" and created + waiting_seconds <= time.time():
        return False  # it left the lobby
    players = public["players"]
    if seat >= len(players) or seat >= len(holders) or players[seat]["resigned"]:
        return False
    holder = holders[seat]
    return holder is not None and holder[:HOLDER_CHARS] == parts[3]


def _in_lobby(state: tuple[dict[str, Any], list[str | None]] | None) -> bool:
    """Whether a listed game still counts: it waits for players (the member's
    expiry says when it leaves the lobby)."""
    return state is not None and state[0]["status"] == "waiting"
