"""Quick-join: a seat at a table of the asked kind, in the oldest listed game
that has one, or in a new game listed for the next players.

How no seat is given twice and no game is over-filled, however many ask at once:

1. The table's index (:meth:`~service.store.lobby_index.LobbyIndex.seek`, one atomic
   script) hands out *tickets*: each of a game's open seats once, and when no
   game has one left, the seats of a new game it lists.  So a game is contended
   by at most as many joiners as it has seats, and a new game is listed only when
   every seat of the others was handed out.
2. A ticket is only a pointer: the seat is taken by the game's own write (a
   join, :func:`service.hosting.seating.join`), which refuses a game that is
   full, started or cancelled.  A refused ticket drops the game from the table,
   and the client seeks again.  A new game is made by the first of its ticket
   holders to find it missing (the others find it made; see :data:`MAKE_SECONDS`):
   by the one the table listed it for with its seat taken, in one write with the
   answer under its key, else with every seat open.  Listing it counts against
   that client address's listed games (:mod:`service.hosting.lobby_caps`): at that
   cap, a seek may hand out a seat of another game but not list a new one
   (:class:`~service.hosting.refusals.LobbyCapError`, answered 429).
3. A ticket whose seat could not be taken because the store failed is given
   back (if it was taken after all, the next holder is refused: see 2).  A seek
   is named, and answered the same ticket when called again by that name: a
   keyed request's seeks are named after its ``Idempotency-Key``, so its retry
   is handed the same tickets in the same order (and a lost reply of the script
   itself, re-sent by the client library, gets its ticket back too).  The last
   ticket's game is also noted under the key: a retry is answered the seat taken
   there before it seeks.

A rated player (apps mode: a player's credential) is handed only tickets of games
whose players' mean skill is within the window around its own that the app sets
(:mod:`service.hosting.skill_window`): the same tickets, names and retries, in
the same atomic script, so the same guarantees hold.

A client still without a seat after :data:`TRIES` rounds is refused
(:class:`~service.hosting.refusals.LobbyBusyError`, 503 with ``Retry-After``).

Plain Python over a store: :func:`quick_join` takes the store, the config, the
client's address (for its lobby caps) and how to name a game's URL (saved in a
keyed answer's ``Location``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.config import Config
from service.hosting import bot_fill, lobby_caps, seating
from service.hosting.lobby_operations import LobbyTimers, table_of
from service.hosting.record import GameRecord
from service.hosting.refusals import (
    AlreadySeatedError,
    AppLimitError,
    ChangingTooFastError,
    HostingError,
    LobbyBusyError,
    LobbyCapError,
)
from service.hosting.saved_answers import Idempotency
from service.hosting.snapshots import snapshot
from service.hosting.tokens import new_game_id
from service.hosting.write_loop import Write, create_game, optimistic_write
from service.store import (
    GameExists,
    GameNotFound,
    GameStore,
    IdempotentReplay,
    NotDurable,
    StoreUnavailable,
)
from service.store.history import Position
from service.store.lobby_index import TICKET_SECONDS, Ticket
from service.store.script_args import IdempotencyRecord
from service.store.skill_seek import SkillAsk

TRIES = 8
"""Rounds of seek-then-join before a quick-join gives up (each refused one means
another client took the game in between)."""

MAKE_SECONDS = 60
"""A ticket holder makes its game when it is missing this soon after the table
listed it (its holders arrive within moments); a game listed before and missing
now is gone (expired), and its ticket refused."""

JOIN_ATTEMPTS = 4
"""Tries of the join's write on a game changing under it (at most its seats'
ticket holders race for it)."""


@dataclass(frozen=True, slots=True)
class Seeker:
    """One quick-join under way: the store and config it works with, the
    request's key (if any), the caller's hold on its address's caps, and how a
    game's URL is named (for the saved answer's ``Location``)."""

    store: GameStore
    config: Config
    idem: Idempotency | None
    hold: lobby_caps.Hold
    location: Callable[[str], str]
    app: str | None = None
    """Apps mode: the app whose table it seeks at (its games only)."""
    holder: str | None = None
    """Apps mode: the player taking the seat (no token then: :func:`seating.take`)."""
    player_id: str | None = None
    """Apps mode: the app's id of that player."""
    skill: SkillAsk | None = None
    """Apps mode, a player's quick-join: the games its seeks may be handed."""
    bot_fill_seconds: float = 0.0
    """Apps mode, a player's quick-join: a game it makes is filled with bots this
    long after it was listed (0: never; :mod:`service.hosting.bot_fill`)."""


def quick_join(
    store: GameStore,
    config: Config,
    body: dict[str, Any],
    idem: Idempotency | None,
    *,
    address: str,
    location: Callable[[str], str],
    app: str | None = None,
    holder: str | None = None,
    player_id: str | None = None,
    skill: SkillAsk | None = None,
    bot_fill_seconds: float = 0.0,
) -> tuple[dict[str, Any], Position]:
    """Seat the caller (at client ``address``) at a table of the kind ``body``
    asks for: the answer's body (``id``, ``seat``, ``token``, ``version``,
    ``status``, ``created``), and the game's last event then (its ETag's);
    ``location(game_id)`` is the game's URL.  With ``app``, at that app's tables
    only; with a player's ``holder`` (the app's ``player_id``), the seat is that
    player's (no ``token``); with its ``skill`` (a rated player's:
    :meth:`service.hosting.skill_window.SkillWindow.ask`) at a table of its skill
    only, and a game it makes is filled with bots ``bot_fill_seconds`` after it
    was listed (0: never).

    With ``idem`` (the request's ``Idempotency-Key``) the seeks are named after the
    key, each ticket's game is noted under it before its seat is taken, and the
    answer is saved with the write that takes it: a retry raises
    :class:`IdempotentReplay` with that answer, or is handed the same tickets."""
    turn, missed = LobbyTimers.configured(config).of_table(
        body["turn_timeout_seconds"], body["autopilot_after_missed_turns"]
    )
    body = {**body, "turn_timeout_seconds": turn, "autopilot_after_missed_turns": missed}
    table = table_of(body["ruleset"], body["options"], body["seats"], turn, missed, app)
    if idem is not None:
        earlier = store.lobby.remembered(idem.key_hash)
        if earlier is not None:
            _game, saved = store.load_with_idempotency(earlier, idem.key_hash)
            if saved is not None:
                raise IdempotentReplay(*saved)
    hold = lobby_caps.Hold(store, config, address)
    hold.take_place()  # refused over the address's cap, before any seat is handed out
    try:
        seeker = Seeker(
            store, config, idem, hold, location, app, holder, player_id, skill, bot_fill_seconds
        )
        return _seat_at(seeker, table, body)
    except NotDurable:  # the seat was taken (not confirmed yet): it counts
        raise
    except BaseException:
        hold.release()
        raise


def _seat_at(seeker: Seeker, table: str, body: dict[str, Any]) -> tuple[dict[str, Any], Position]:
    """Seek-then-join rounds at ``table`` (see :func:`quick_join`)."""
    config, idem, hold = seeker.config, seeker.idem, seeker.hold
    lifetime = config.lobby_waiting_seconds
    lobby = seeker.store.lobby
    for round_ in range(TRIES):
        live_since = time.time() - config.lobby_live_seconds
        name, keep = _name(config, idem, round_)
        ticket = lobby.seek(
            table,
            lifetime,
            new_game_id(seeker.app),
            body["seats"],
            name,
            keep,
            live_since,
            hold.may_list,
            seeker.skill,
        )
        if ticket is None:  # it would list a new game, past the address's cap
            raise hold.listing_refused()
        try:
            if idem is not None:
                lobby.remember(idem.key_hash, ticket.game, config.idempotency_ttl_seconds)
            return _take_seat(seeker, ticket, body)
        except NotDurable:  # the seat was taken: a retry with the key is answered it
            raise
        except (
            StoreUnavailable,
            LobbyCapError,
            AppLimitError,
            ChangingTooFastError,
            AlreadySeatedError,
        ):
            _give_back(seeker, table, ticket, lifetime)
            raise
        except (HostingError, GameNotFound):  # full, started or cancelled: not to offer
            lobby.offer(table, ticket.game, 0.0, 0, lifetime)
    raise LobbyBusyError(
        f"no seat could be taken in {TRIES} tries (every game offered filled first); retry"
    )


def _name(config: Config, idem: Idempotency | None, round_: int) -> tuple[str, int]:
    """The name of a round's seek and how long its ticket is kept under it: a
    keyed request's (the key's and the round's, for as long as the key is
    remembered: its retry is handed the same tickets in the same order), else a
    random one for :data:`~service.store.lobby_index.TICKET_SECONDS` (a retry of the
    call by the client library)."""
    if idem is None:
        return secrets.token_hex(8), TICKET_SECONDS
    return f"{idem.key_hash[:32]}.{round_}", config.idempotency_ttl_seconds


def _give_back(seeker: Seeker, table: str, ticket: Ticket, lifetime: float) -> None:
    """Give a ticket back, if the store lets us."""
    player = None if seeker.skill is None else seeker.skill.player
    try:
        seeker.store.lobby.release(table, ticket, lifetime, player)
    except StoreUnavailable:
        pass  # the game's seat stays unoffered: it leaves the lobby when it expires


def _answer(
    record: GameRecord, seat: int, token: str | None, version: int, new: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": record.id, "seat": seat}
    if token is not None:
        out["token"] = token
    return out | {"version": version, "status": record.status, "created": new}


def _saved(seeker: Seeker, answer: dict[str, Any]) -> IdempotencyRecord | None:
    """The idempotency record of ``answer`` (None without a key)."""
    if seeker.idem is None:
        return None
    location = seeker.location(answer["id"])
    return seeker.idem.record(201, answer, answer["version"], headers={"Location": location})


def _make(
    seeker: Seeker, ticket: Ticket, body: dict[str, Any]
) -> tuple[dict[str, Any] | None, Position] | None:
    """Make the listed game a ticket points to (unless another of its ticket
    holders made it first: then None): the answer when this ticket's seat was
    taken with it (else None), and the game's last event.  The ticket that listed it makes it with
    its seat taken, in the one write that saves the answer under the request's
    key (so a retry after a write made but not confirmed replays it); the
    others make it with every seat open, and join it."""
    player = {"name": body["name"], "holder": seeker.holder, "player_id": seeker.player_id}
    players = [player] if ticket.new else []
    record, tokens, events = seating.create_record(
        players,
        body["seats"],
        body["ruleset"],
        body["options"],
        None,
        False,
        body["turn_timeout_seconds"],
        body["autopilot_after_missed_turns"],
        game_id=ticket.game,
        listed=True,
    )
    record.created_at = ticket.created_at
    if ticket.new and seeker.skill is not None and seeker.bot_fill_seconds > 0:
        record.deadline = bot_fill.fill_at(record, seeker.bot_fill_seconds)
    answer = None
    saved = None
    if ticket.new:
        seeker.hold.take_seat(record, 0, lists=True)
        answer = _answer(record, 0, tokens.get(0), 1, True)
        saved = _saved(seeker, answer)
    try:
        written = create_game(seeker.store, seeker.config, record, events, saved)
    except GameExists:
        return None
    return answer, written.last


def _take_seat(
    seeker: Seeker, ticket: Ticket, body: dict[str, Any]
) -> tuple[dict[str, Any], Position]:
    """Take the lowest open seat of the ticket's game through the game's own write
    (making the game first if nobody has yet), held against the caller's cap in
    place of the place it held."""

    def step(version: int, record: GameRecord) -> tuple[Write, dict[str, Any]]:
        seat, token, events = seating.join(
            record, body["name"], holder=seeker.holder, player_id=seeker.player_id
        )
        seeker.hold.take_seat(record, seat, lists=ticket.new)
        answer = _answer(record, seat, token, version + 1, ticket.new)
        return Write(events, snapshot(record, version + 1), _saved(seeker, answer)), answer

    made = False
    for _attempt in range(JOIN_ATTEMPTS):
        try:
            return optimistic_write(
                seeker.store, seeker.config, ticket.game, step, idem=seeker.idem
            )
        except GameNotFound:
            if made or time.time() - ticket.created_at > MAKE_SECONDS:
                raise  # a game listed long ago and gone since: not to make again
            made_now = _make(seeker, ticket, body)
            if made_now is not None and made_now[0] is not None:
                return made_now[0], made_now[1]
            made = True
        except ChangingTooFastError:
            pass
    raise ChangingTooFastError("the game is changing too fast; retry")
