"""The population's players: a bot level with noise, and a game played out by them.

A player's hidden *style* is a bot level (``basic``, ``strong``, ``expert``) and a
noise: the probability that a decision of theirs is a uniformly random legal move
(:mod:`service.bots.random_bot`) instead of their bot's.  Both choices come from the
game's seed, the seat and the turn (:func:`service.bots.turn_rng.turn_rng` for the
bot's, a generator of its own for the noise's), so a game played again from its seed
makes the same moves.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from service import bots
from service.bots.turn_rng import turn_rng
from service.engine.game_events import Event
from service.engine.moves import Move
from service.engine.shuffle import Shuffler
from service.engine.state import State
from service.engine.view import observe

LEVELS = ("basic", "strong", "expert")
"""The bot levels of the population, weakest first."""


@dataclass(frozen=True, slots=True)
class Style:
    """How one player plays: its bot ``level``, and the probability ``noise`` that a
    decision is a random legal move instead."""

    level: str
    noise: float

    def to_list(self) -> list[Any]:
        return [self.level, self.noise]


def noise_rng(shuffler: Shuffler, state: State) -> random.Random:
    """The generator of the noise of the turn being played in ``state``."""
    rnd = state.round
    assert rnd is not None
    turn = rnd.turns_taken * 2 + (rnd.phase.value == "discard")
    return shuffler.rng("noise", rnd.turn, len(state.results), turn)


def decide(
    style: Style,
    view: dict[str, Any],
    rng: random.Random,
    noise: random.Random,
    history: list[dict[str, Any]] | None,
) -> Move:
    """The move of a player of ``style``: a random legal move with probability
    ``style.noise``, else its bot's."""
    if style.noise > 0 and noise.random() < style.noise:
        return bots.decide("random", view, rng)
    return bots.decide(style.level, view, rng, history if style.level in bots.TRACKING else None)


Apply = Callable[[int, Move], list[Event]]
"""Applies one seat's move (the engine's ``State.apply`` or a hosted game's
``GameRecord.play``) and gives its events."""


def play_out(
    state: State,
    seed: str,
    styles: Sequence[Style],
    apply: Apply,
    history: list[dict[str, Any]],
) -> list[Event]:
    """Play ``state`` to its end, each seat as its style says; ``apply`` makes each
    move, ``history`` is the game's public events so far (extended as it goes).
    Returns every event of the moves made."""
    shuffler = Shuffler.from_hex(seed)
    events: list[Event] = []
    while state.round is not None:
        seat = state.round.turn
        view = observe(state, seat)
        move = decide(
            styles[seat], view, turn_rng(shuffler, state), noise_rng(shuffler, state), history
        )
        made = apply(seat, move)
        events += made
        history.extend(e.to_dict() for e in made if e.is_public)
    return events
