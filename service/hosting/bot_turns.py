"""The bots' turns in a hosted game: when a bot's turn is due, each bot whose
turn it is plays until a human's turn comes or the round ends (a human seat on
autopilot is played by its bot the same way), a bounded stretch a call -- played by
a bot worker (:mod:`service.hosting.due_turns`), never by a request.

A bot's random choices come from the game's seed, the seat and the turn
(:func:`service.bots.turn_rng.turn_rng`), so a replay of the game plays the same
moves; the bots that track the cards (``strong``) are given the game's public
events so far.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from service import bots
from service.bots import expert
from service.bots.turn_rng import turn_rng
from service.config import Config
from service.engine import byte_cache
from service.engine.errors import InvalidOptionError
from service.engine.game_events import Event
from service.engine.shuffle import Shuffler
from service.engine.solver import switch as solver_switch
from service.engine.state import State
from service.engine.view import observe

History = Callable[[], list[dict[str, Any]]]
"""Loads the game's stored public events (as the events endpoint shows them)."""

BOT_MOVES_PER_CALL = 32
"""The most bot moves one call plays: a lap of seven bots (14 moves) fits twice, and
the costliest bot (``strong``, 8 seats, its history read) stays well under a second.
When bots are left to play, the game is due again at once, and a bot worker plays the
next stretch in a write of its own (:mod:`service.hosting.due_turns`), after the games
due before it."""


def configure(config: Config) -> None:
    """Apply ``config``'s process-wide settings of the bots' play: the hand solver
    (``SOLVER``), the memos' byte budget (``BOT_CACHE_MB``) and the expert's samples
    (``BOT_EXPERT_SAMPLES``).  Every process that plays or evaluates calls it at start:
    the server (its evaluator) and the bot worker."""
    solver_switch.use_c(config.solver == "C")
    byte_cache.configure(config.bot_cache_mb << 20)
    expert.use_samples(config.bot_expert_samples)


def check_bot_level(level: str, field: str) -> None:
    """Refuse a bot level that does not exist (422, naming the request's ``field``)."""
    if level not in bots.LEVELS:
        raise InvalidOptionError(
            f"unknown bot level {level!r}; expected one of {', '.join(bots.LEVELS)}",
            field=field,
        )


def play_bots(
    state: State | None,
    seed: str,
    levels: Sequence[str | None],
    history: History | None = None,
) -> list[Event]:
    """Play the turns of the bots (``levels``: each seat's bot, None for a human)
    whose turn it is in ``state``, in turn, at most :data:`BOT_MOVES_PER_CALL`
    moves; their events (``history``: the game's stored public events, for the
    bots that track the cards)."""
    events: list[Event] = []
    stored: list[dict[str, Any]] | None = None
    for _move in range(BOT_MOVES_PER_CALL):
        if state is None or state.round is None:
            break
        seat = state.round.turn
        level = levels[seat]
        if level is None:
            break
        rng = turn_rng(Shuffler.from_hex(seed), state)
        past = None
        if level in bots.TRACKING and history is not None:
            stored = history() if stored is None else stored
            past = stored + [e.to_dict() for e in events if e.is_public]
        move = bots.decide(level, observe(state, seat), rng, past)
        events += marked(state.apply(seat, move), seat, "bot")
    return events


def marked(events: Sequence[Event], seat: int, flag: str) -> list[Event]:
    """``events`` with ``flag`` (``"bot"``, ``"automatic"``) set on those of
    ``seat``'s own move (drew, discarded, went out): a move made for the seat."""
    return [
        Event(e.type, {**e.data, flag: True}, e.seat)
        if e.data.get("seat") == seat and e.type in ("drew", "discarded", "went_out")
        else e
        for e in events
    ]
