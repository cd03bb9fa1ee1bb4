"""The ``random`` level: any legal move, uniformly."""

from __future__ import annotations

import random
from typing import Any

from service.engine.moves import Move


def decide(
    view: dict[str, Any], rng: random.Random, history: list[dict[str, Any]] | None = None
) -> Move:
    return Move.from_dict(rng.choice(view["legal_moves"]))
