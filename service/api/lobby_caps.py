"""The lobby's caps per client address: the seats it may hold at once in listed
games (``LOBBY_SEATS_PER_ADDRESS``) and the listed games it may have waiting for
players (``LOBBY_LISTED_PER_ADDRESS``), so that one client cannot take every
open seat of the lobby nor fill its listing.

The client is its address as the rate limits know it
(:func:`service.api.limits.by_address`); unlike them the caps stay on with
``RATE_LIMITS=false`` (per-client limits at a load balancer cannot count seats), and
a cap of 0 is none.  What counts:

* a seat taken in a **listed** game (by its create, a join by id, a quick-join),
  while the game waits for players (and is still in the lobby) or is in play,
  and its player has not left or resigned.  Seats of unlisted games (invite
  links, rematches) never count;
* a listed game made by ``POST /v1/games``, while it waits for players and is
  in the lobby (a game quick-join lists counts by its seat only).

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

from service.api.context import call, services, store
from service.api.limits import by_address
from service.api.problems import ApiError
from service.hosting.record import GameRecord
from service.store import StoreUnavailable
from service.store.holds import Refusal

log = logging.getLogger(__name__)

RETRY_SECONDS = 60
"""The ``Retry-After`` of a refusal: a seat or a listed game frees when a game
ends, fills, or is left, not at a time the service knows."""

PLACEHOLDER_SECONDS = 60
"""How long a quick-join's place, held before it knows its game, counts at most
(its request's own life, with room)."""


def _caps() -> tuple[int, int] | None:
    """(most seats, most listed games) per address; None when no cap applies."""
    config = services().config
    if not config.lobby_seats_per_address and not config.lobby_listed_per_address:
        return None
    return config.lobby_seats_per_address, config.lobby_listed_per_address


def seat_member(record: GameRecord, seat: int) -> str:
    """How an address's hold on ``seat`` of ``record`` is kept: the game, the seat
    and the game's creation (ms), by which a waiting game leaves the lobby."""
    return f"{record.id}:{seat}:{int(record.created_at * 1000)}"


class Hold:
    """What one request holds against its address's caps: taken (:meth:`take`)
    before its game's write, replaced by a later :meth:`take` (a write retried
    on a fresher game may pick another seat), given back by :meth:`release`
    when the request fails."""

    def __init__(self) -> None:
        self._caps = _caps()
        self._address = by_address(call().environ)
        self._seats: list[str] = []
        self._listed: str | None = None

    def take(self, seats: Sequence[str], listed: tuple[str, float] | None = None) -> None:
        """Hold ``seats`` (members: :func:`seat_member`) and the listed game
        ``listed`` (id, when it leaves the lobby) instead of what this request held
        so far; 429 ``RATE_LIMITED`` over a cap, with nothing changed."""
        if self._caps is None:
            return
        most_seats, most_listed = self._caps
        config = services().config
        until = time.time() + config.game_ttl_seconds
        add = [(m, time.time() + PLACEHOLDER_SECONDS if m[0] == "?" else until) for m in seats]
        refusal = None
        for attempt in range(2):
            refusal = store().holds.change(
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
                return
            if attempt == 0 and not _heal(self._address):
                break
        assert refusal is not None
        raise _refused(refusal, most_seats if refusal.cap == "seats" else most_listed)

    def take_place(self) -> None:
        """Hold a place for a seat not known yet (a quick-join's, before its seek)."""
        self.take(["?" + secrets.token_hex(8)])

    def take_seat(self, record: GameRecord, seat: int) -> None:
        """Hold ``seat`` of ``record``, if it is a listed game."""
        if record.listed:
            self.take([seat_member(record, seat)])

    def take_new_game(self, record: GameRecord) -> None:
        """Hold a new listed game and its seats taken by its creator."""
        if not record.listed:
            return
        seats = [seat_member(record, s.seat) for s in record.seats if s.token_hash is not None]
        leaves = record.created_at + services().config.lobby_waiting_seconds
        self.take(seats, (record.id, leaves))

    def release(self) -> None:
        """Give back what this request holds (its request failed); a store that
        fails now leaves it to expire, or to be found not held at the cap."""
        if self._caps is None or (not self._seats and self._listed is None):
            return
        try:
            listed = [] if self._listed is None else [self._listed]
            store().holds.drop(self._address, self._seats, listed)
        except StoreUnavailable as exc:
            log.warning("lobby hold not given back: %s", exc)
        self._seats, self._listed = [], None


def let_go(record: GameRecord, seat: int) -> None:
    """After a leave or a resign: the request's address holds ``seat`` of
    ``record`` no more, nor the game if it was cancelled."""
    if not record.listed or _caps() is None:
        return
    listed = [record.id] if record.cancelled else []
    try:
        store().holds.drop(by_address(call().environ), [seat_member(record, seat)], listed)
    except StoreUnavailable as exc:
        log.warning("lobby hold not given back: %s", exc)


def _refused(refusal: Refusal, most: int) -> ApiError:
    if refusal.cap == "seats":
        detail = (
            f"lobby limit: this address holds {refusal.held} seats in listed games, the most "
            f"it may ({most}); finish, resign or leave one first"
        )
    else:
        detail = (
            f"lobby limit: this address has {refusal.held} listed games waiting for players, "
            f"the most it may ({most}); wait for one to fill, or leave it, first"
        )
    return ApiError("RATE_LIMITED", detail, headers={"Retry-After": str(RETRY_SECONDS)})


def _heal(address: str) -> bool:
    """Check every game ``address`` holds against the game itself and drop what it
    holds no more; whether anything was dropped."""
    held = store().holds.held(address)
    seats = [(m, m.split(":")) for m in held.seats if not m.startswith("?")]
    ids = sorted({parts[0] for _m, parts in seats} | set(held.listed))
    found = store().lobby.views(ids)
    publics = {
        game_id: None if view is None else orjson.loads(view[1])
        for game_id, view in zip(ids, found, strict=True)
    }
    waiting_seconds = services().config.lobby_waiting_seconds
    stale_seats = [
        member
        for member, parts in seats
        if not _holds_seat(publics[parts[0]], parts, waiting_seconds)
    ]
    stale_listed = [game for game in held.listed if not _in_lobby(publics[game])]
    store().holds.drop(address, stale_seats, stale_listed)
    return bool(stale_seats or stale_listed)


def _holds_seat(public: dict[str, Any] | None, parts: list[str], waiting_seconds: int) -> bool:
    """Whether a seat member (``[game, seat, created ms]``) still counts: its game
    waits for players in the lobby or is in play, and its player is seated
    still and did not resign."""
    if public is None or len(parts) != 3 or public["status"] not in ("waiting", "playing"):
        return False
    seat, created = int(parts[1]), int(parts[2]) / 1000
    if public["status"] == "waiting" and created + waiting_seconds <= time.time():
        return False  # it left the lobby
    players = public["players"]
    return (
        seat < len(players) and players[seat]["name"] is not None and not players[seat]["resigned"]
    )


def _in_lobby(public: dict[str, Any] | None) -> bool:
    """Whether a listed game still counts: it waits for players (the member's
    expiry says when it leaves the lobby)."""
    return public is not None and public["status"] == "waiting"
