"""The bots' turns in a hosted game: after every move, each bot whose turn it
is plays until a human's turn comes or the round ends (a human seat on
autopilot is played by its bot the same way).

A bot's random choices come from the game's seed, the seat and the turn, so a
replay of the game plays the same moves; the bots that track the cards
(``strong``) are given the game's public events so far.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from service import bots
from service.engine.records import Event
from service.engine.shuffle import Shuffler
from service.engine.state import State
from service.engine.view import observe

if TYPE_CHECKING:
    from service.hosting.record import GameRecord

History = Callable[[], list[dict[str, Any]]]
"""Loads the game's stored public events (as the events endpoint shows them)."""

BOT_MOVES_PER_CALL = 32
"""The most bot moves one call plays: a lap of seven bots (14 moves) fits twice, and
the costliest bot (``strong``, 8 seats, its history read) stays well under a second.
When bots are left to play, the game is due again at once, so the next request that
touches it plays the next stretch (:func:`service.hosting.timers.apply_timeouts`)."""


def play_bots(
    record: GameRecord, history: History | None = None, recent: Sequence[Event] = ()
) -> list[Event]:
    """Play ``record``'s bots whose turn it is, in turn, at most
    :data:`BOT_MOVES_PER_CALL` moves; their events (``recent``: those of the move
    that led here, not stored yet)."""
    state = record.state
    events: list[Event] = []
    stored: list[dict[str, Any]] | None = None
    for _move in range(BOT_MOVES_PER_CALL):
        if state is None or state.round is None:
            break
        level = record.seats[state.round.turn].bot
        if level is None:
            break
        seat = state.round.turn
        rng = Shuffler.from_hex(record.seed).rng("bot", seat, len(state.results), _turn_key(state))
        past = None
        if level in bots.TRACKING and history is not None:
            stored = history() if stored is None else stored
            past = stored + [e.to_dict() for e in [*recent, *events] if e.is_public]
        move = bots.decide(level, observe(state, seat), rng, past)
        events += [_as_bot(e, seat) for e in state.apply(seat, move)]
    return events


def _turn_key(state: State) -> int:
    rnd = state.round
    assert rnd is not None
    return rnd.turns_taken * 2 + (rnd.phase.value == "discard")


def _as_bot(event: Event, seat: int) -> Event:
    if event.data.get("seat") == seat and event.type in ("drew", "discarded", "went_out"):
        return Event(event.type, {**event.data, "bot": True}, event.seat)
    return event
