"""Server-side bots.  A bot sees only its own seat's view (built by
:func:`service.engine.view.observe`, the same function the API uses) and
returns one of the moves listed in ``view["legal_moves"]``.

Levels: ``random`` (any legal move), ``basic`` (greedy on its own hand),
``strong`` (expected value over the unseen cards, card tracking, avoids
feeding the next player) and ``expert`` (``strong``'s knowledge, the hidden
cards sampled and each candidate move played out to the end of the round).
Every brain is ``decide(view, rng, history=None)``; ``history`` is an optional
list of the game's PUBLIC events (the dicts of the events endpoint), which
``strong`` and ``expert`` use to track the discard pile.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from service.bots import basic, expert, random_bot, strong
from service.engine.moves import Move


class Brain(Protocol):
    def __call__(
        self,
        view: dict[str, Any],
        rng: random.Random,
        history: list[dict[str, Any]] | None = None,
    ) -> Move: ...


BRAINS: dict[str, Brain] = {
    "random": random_bot.decide,
    "basic": basic.decide,
    "strong": strong.decide,
    "expert": expert.decide,
}
LEVELS: tuple[str, ...] = tuple(BRAINS)
TRACKING: frozenset[str] = frozenset({"strong", "expert"})
"""Levels that use the public event history when the caller can supply it."""


def decide(
    level: str,
    view: dict[str, Any],
    rng: random.Random,
    history: list[dict[str, Any]] | None = None,
) -> Move:
    """The move the bot of ``level`` makes from ``view`` (and public ``history``)."""
    return BRAINS[level](view, rng, history=history)
