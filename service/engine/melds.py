"""Melds: sets and runs, their validity, and arrangements of a hand.

>>> from service.engine.cards import parse_cards
>>> Meld(MeldKind.RUN, tuple(parse_cards("4H 5H 6H"))).to_dict()
{'kind': 'run', 'cards': ['4H', '5H', '6H']}
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from service.engine.cards import Card


class MeldKind(enum.Enum):
    SET = "set"
    RUN = "run"


@dataclass(frozen=True, slots=True)
class Meld:
    """A valid meld: its kind and its cards (a run in ascending order)."""

    kind: MeldKind
    cards: tuple[Card, ...]

    def to_dict(self) -> dict[str, Any]:
        """The API form ``{"kind": ..., "cards": [...]}``."""
        return {"kind": self.kind.value, "cards": [c.code for c in self.cards]}

    def __str__(self) -> str:
        return "[" + " ".join(c.code for c in self.cards) + "]"


@dataclass(frozen=True, slots=True)
class LayOff:
    """Cards added to the table meld at index ``target`` (lay_off variant)."""

    target: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Arrangement:
    """A hand split into melds, lay-offs and deadwood; ``points`` is the deadwood's
    penalty (before any round multiplier)."""

    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]
    points: int
    layoffs: tuple[LayOff, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "melds": [m.to_dict() for m in self.melds],
            "deadwood": [c.code for c in self.deadwood],
            "points": self.points,
        }
        if self.layoffs:
            out["layoffs"] = [
                {"target": lo.target, "cards": [c.code for c in lo.cards]} for lo in self.layoffs
            ]
        return out
