"""The lobby's operations on a game record: leaving a waiting game (the last
human out cancels it), renaming before the start, resigning during play; the
timers of a table strangers share; the *table* of a game (what quick-join
matches: ruleset, options, seats, timers); and the short summary the lobby lists.

No Flask and no Redis here (the lobby's index is :mod:`service.store.lobby_index`).
The game's own record stays the authority on its seats: the index only points
at games, and every seat is taken through the record.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from service.config import Config
from service.engine.errors import GameNotInProgressError, InvalidOptionError
from service.engine.game_events import Event
from service.engine.options import Options, preset
from service.engine.rules import Game
from service.hosting.record import GameRecord
from service.hosting.refusals import GameStartedError, ResignedError
from service.hosting.seating import refuse_ended
from service.hosting.timers import AUTOPILOT_LEVEL
from service.hosting.tokens import app_of_game


@dataclass(frozen=True, slots=True)
class LobbyTimers:
    """The turn timer every listed or quick-join table has: a stranger may take a
    seat there and never play, and the timer then plays the seat's turns until
    the autopilot takes it over.  ``turn_seconds`` and ``autopilot_after`` are
    the defaults, ``max_turn_seconds`` the longest timer a table may ask for;
    ``autopilot_after`` is also the most missed turns it may ask for."""

    turn_seconds: int
    max_turn_seconds: int
    autopilot_after: int

    @classmethod
    def configured(cls, config: Config) -> LobbyTimers:
        """The timers ``config`` sets (``LOBBY_TURN_SECONDS``...)."""
        return cls(
            config.lobby_turn_seconds, config.lobby_turn_max_seconds, config.lobby_autopilot_after
        )

    def of_table(self, turn_timeout: int | None, autopilot_after: int | None) -> tuple[int, int]:
        """The timers of a listed or quick-join table that asked for these (None:
        the default).  Raises :class:`InvalidOptionError` (422) beyond the bounds.

        >>> timers = LobbyTimers(60, 600, 2)
        >>> timers.of_table(None, None), timers.of_table(30, 1)
        ((60, 2), (30, 1))
        >>> timers.of_table(3600, None)
        Traceback (most recent call last):
        ...
        service.engine.errors.InvalidOptionError: a listed table's turn timer is at most 600 s
        """
        turn = self.turn_seconds if turn_timeout is None else turn_timeout
        missed = self.autopilot_after if autopilot_after is None else autopilot_after
        if turn > self.max_turn_seconds:
            raise InvalidOptionError(
                f"a listed table's turn timer is at most {self.max_turn_seconds} s",
                field="turn_timeout_seconds",
            )
        if missed > self.autopilot_after:
            raise InvalidOptionError(
                f"a listed table hands a seat to the autopilot after at most "
                f"{self.autopilot_after} missed turns",
                field="autopilot_after_missed_turns",
            )
        return turn, missed


def table_of(
    ruleset: str,
    overrides: dict[str, Any],
    seats: int,
    turn_timeout: int | None,
    autopilot_after: int | None,
    app: str | None = None,
) -> str:
    """The table a quick-join asks for, as a short stable name: games of the same
    ruleset, effective options, seat count and timers share it, and of the same
    app (apps mode: an app's players meet only its games).  Raises
    :class:`~service.engine.errors.InvalidOptionError` (422) for bad options or seats.

    >>> table_of("classic", {}, 4, None, None) == table_of("classic", {}, 4, None, None)
    True
    >>> table_of("classic", {}, 4, None, None) != table_of("classic", {}, 3, None, None)
    True
    """
    options = Options.from_dict(overrides, base=preset(ruleset))
    Game(seats, options)  # validates the seat count and decks
    return _table_name(ruleset, options.to_dict(), seats, turn_timeout, autopilot_after, app)


def record_table(record: GameRecord) -> str:
    """The table of a game (see :func:`table_of`)."""
    return _table_name(
        record.ruleset,
        record.options.to_dict(),
        len(record.seats),
        record.turn_timeout,
        record.autopilot_after,
        app_of_game(record.id),
    )


def public_table(public: dict[str, Any]) -> str:
    """The table of a game, from its public view (see :func:`table_of`)."""
    timer = public["timer"]
    return _table_name(
        public["ruleset"],
        public["options"],
        len(public["players"]),
        timer["turn_timeout_seconds"],
        timer["autopilot_after_missed_turns"],
        app_of_game(public["id"]),
    )


def _table_name(
    ruleset: str,
    options: dict[str, Any],
    seats: int,
    turn_timeout: int | None,
    autopilot_after: int | None,
    app: str | None = None,
) -> str:
    text = orjson.dumps(
        [ruleset, options, seats, turn_timeout, autopilot_after], option=orjson.OPT_SORT_KEYS
    )
    name = hashlib.sha256(text).hexdigest()[:20]
    return name if app is None else f"{app}-{name}"


def open_seats(record: GameRecord) -> int:
    """How many seats of a waiting game anyone may take now (0 once it is not waiting)."""
    if record.status != "waiting":
        return 0
    return sum(1 for s in record.seats if s.is_joinable)


def _require_waiting(record: GameRecord, action: str) -> None:
    refuse_ended(record)
    if record.status != "waiting":
        raise GameStartedError(f"the game has started: {action}")


def leave(record: GameRecord, seat: int, reason: str | None = None) -> list[Event]:
    """``seat``'s player leaves a game that has not started (``reason``
    ``removed``: its app removed the player): the seat reopens
    (its token is void), or, a rematch seat, is reserved again for the finished
    game's player it was reserved for (who may claim it again, by name as
    before); when no human is left, the game is cancelled."""
    _require_waiting(record, "resign instead (POST /v1/games/{id}/resign)")
    info = record.seats[seat]
    left: dict[str, Any] = {"seat": seat, "name": info.name}
    if reason is not None:
        left["reason"] = reason
    events = [Event("player_left", left)]
    info.token_hash = info.bot = None
    info.autopilot, info.missed_turns = False, 0
    if info.claimed_with is None:
        info.name = None  # its player_id kept: see Seat.player_id
    else:  # a rematch seat stays its player's: not joinable
        info.reserved_for, info.claimed_with = info.claimed_with, None
    if not any(s.token_hash is not None or s.reserved_for is not None for s in record.seats):
        record.cancelled = True
        record.deadline = None  # a quick-join table's time for bots (hosting.bot_fill)
        events.append(Event("game_cancelled", {"reason": "last_player_left"}))
    return events


def rename(record: GameRecord, seat: int, name: str) -> list[Event]:
    """Change ``seat``'s display name before the start."""
    _require_waiting(record, "names are fixed once it starts")
    info = record.seats[seat]
    if info.name == name:
        return []
    previous, info.name = info.name, name
    return [Event("player_renamed", {"seat": seat, "name": name, "previous": previous})]


def resign(record: GameRecord, seat: int) -> list[Event]:
    """``seat``'s player resigns a game in play: the autopilot's bot plays the seat
    to the end (never taken back), which the public view and the results show."""
    if record.status != "playing":
        if record.status == "waiting":
            raise GameNotInProgressError("the game has not started: leave it instead")
        raise GameNotInProgressError("the game is over")
    info = record.seats[seat]
    if info.resigned:
        raise ResignedError("you resigned already")
    info.bot, info.autopilot, info.resigned = AUTOPILOT_LEVEL, True, True
    events = [Event("player_resigned", {"seat": seat, "name": info.name, "level": AUTOPILOT_LEVEL})]
    record.reset_deadline()
    return events


def summary(public: dict[str, Any], created_at: float) -> dict[str, Any]:
    """The lobby's entry for a game, from its public view."""
    players = public["players"]
    return {
        "id": public["id"],
        "status": public["status"],
        "ruleset": public["ruleset"],
        "options": public["options"],
        "seats": {
            "total": len(players),
            "taken": sum(1 for p in players if p["name"] is not None),
            "open": public["open_seats"],
        },
        "players": [
            {"seat": p["seat"], "name": p["name"], "bot": p["bot"]}
            for p in players
            if p["name"] is not None
        ],
        "created_at": created_at,
        "version": public["version"],
    }
