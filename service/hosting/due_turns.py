"""Playing a game's due turn: the step of the bot workers (:mod:`service.botplay`).

A game's turn falls due when a bot (or a seat on autopilot) is to play -- at once --
or when a player's turn timer runs out.  Every write records when in Redis, with the
write (:mod:`service.store.due_games`); a bot worker that claims the game plays the
turn here, with the one write loop (:func:`~service.hosting.write_loop.optimistic_write`):
one stretch of bot moves (at most :data:`~service.hosting.bot_turns.BOT_MOVES_PER_CALL`),
or the overdue player's automatic move (and the autopilot hand-over), a write each.
The game is then due again from what that write left -- at once when bots are left to
play -- so a worker's threads take the games in turn, none hogging them.

A waiting quick-join table falls due when its time for bots comes: its open seats
are given to bots of its players' skill (:mod:`service.hosting.bot_fill`).

A game whose every seat is played by a bot is played at a bounded pace: after each
stretch, its next one is due ``BOT_IDLE_MOVE_SECONDS`` per move later
(:func:`pace`), so it cannot flood its event log nor take a worker's time from the
games people play.  The bots' random choices come from the game's seed
(:mod:`service.hosting.bot_turns`), so who plays a turn, and when, never changes a
replay.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from service.config import Config
from service.engine.game_events import Event
from service.hosting.bot_fill import fill_with_bots
from service.hosting.record import GameRecord
from service.hosting.snapshots import snapshot
from service.hosting.timers import apply_timeouts
from service.hosting.write_loop import Write, optimistic_write, public_events
from service.store import GameStore

PLAYED_FLAGS = ("bot", "automatic")


@dataclass(frozen=True, slots=True)
class Played:
    """What one claim of a due game wrote: its events (0: nothing was due, or another
    write came first), the seats' moves among them, and whether it finished the game."""

    events: int = 0
    moves: int = 0
    finished: bool = False


def moves_in(events: list[Event]) -> int:
    """The moves made for seats among ``events`` (draws, discards and goings out
    flagged ``bot`` or ``automatic``; a draw's copy private to its seat not counted)."""
    return sum(1 for e in events if e.is_public and any(e.data.get(flag) for flag in PLAYED_FLAGS))


def pace(record: GameRecord, moves: int, now: float, idle_move_seconds: float) -> None:
    """Push back the next stretch of a game whose every seat is a bot's: due
    ``idle_move_seconds`` per move just played later (not sooner than it was)."""
    if record.all_bots and record.deadline is not None and moves:
        record.deadline = max(record.deadline, now + idle_move_seconds * moves)


def play_due(store: GameStore, config: Config, game_id: str) -> Played:
    """Play ``game_id``'s due turn, if it is due (a stretch of bot moves, or an
    overdue player's automatic move), and save it; what was written (nothing when
    nothing was due, or another write came first: then the game is due again from
    what that write left, and whoever claims it next plays it -- a worker never plays
    on after a lost race, which would have two play one game in step).  Raises
    :class:`~service.store.store_errors.GameNotFound` when the game is gone."""

    tried: list[int] = []

    def step(version: int, record: GameRecord) -> tuple[Write | None, Played]:
        if tried:  # a write came first: the turn it left due is the next claim's
            return None, Played()
        tried.append(version)
        now = time.time()
        if record.status == "waiting":  # a quick-join table's time for bots
            events = fill_with_bots(store, record, now)
        else:
            events = apply_timeouts(record, now, history=lambda: public_events(store, game_id))
        if not events:
            return None, Played()
        moves = moves_in(events)
        pace(record, moves, now, config.bot_idle_move_seconds)
        played = Played(len(events), moves, record.status == "finished")
        return Write(events, snapshot(record, version + 1)), played

    played, _last = optimistic_write(store, config, game_id, step)
    return played
