"""The random numbers of a bot's turn: drawn from the game's seed, the seat, the
round and the turn, so that a game played again from its seed (a hosted game's
replay, a simulation) makes the same choices.  The host
(:mod:`service.hosting.bot_turns`) and the simulator (:mod:`service.bots.simulate`)
both take them from here."""

from __future__ import annotations

import random

from service.engine.shuffle import Shuffler
from service.engine.state import State


def turn_rng(shuffler: Shuffler, state: State) -> random.Random:
    """The generator of the turn being played in ``state`` (by the seat on turn),
    from the game seed's ``shuffler``."""
    rnd = state.round
    assert rnd is not None
    turn = rnd.turns_taken * 2 + (rnd.phase.value == "discard")
    return shuffler.rng("bot", rnd.turn, len(state.results), turn)
