"""Moves: small frozen values with one JSON form and one text notation.

The JSON form is the API's move body; the text notation is for logs, tests
and the console.

>>> Move.parse("draw stock")
Draw(source=<Source.STOCK: 'stock'>)
>>> str(Move.from_dict({"type": "discard", "card": "th"}))
'discard 10H'
>>> m = Move.parse("go_out KD 4H-5H-6H 9C-9D-7S")
>>> m.to_dict()
{'type': 'go_out', 'discard': 'KD', 'melds': [['4H', '5H', '6H'], ['9C', '9D', '7S']]}
>>> Move.parse(str(m)) == m
True
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.engine.cards import Card
from service.engine.errors import MalformedError

MAX_MELDS = 16
MAX_MELD_CARDS = 16


class Source(enum.Enum):
    """Where a draw takes its card from."""

    STOCK = "stock"
    DISCARD = "discard"


class Move:
    """Base class of the three moves; parse with :meth:`from_dict` or :meth:`parse`."""

    __slots__ = ()

    type: str

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Move:
        """Parse the API's JSON form; raises :class:`MalformedError` naming the field."""
        if not isinstance(data, Mapping):
            raise MalformedError("a move must be an object", field="type")
        kind = data.get("type")
        if not isinstance(kind, str) or kind not in _PARSERS:
            raise MalformedError(
                f"unknown move type {kind!r}; expected draw, discard or go_out", field="type"
            )
        extra = sorted(set(data) - _FIELDS[kind])
        if extra:
            raise MalformedError(f"unknown field {extra[0]!r} for a {kind} move", field=extra[0])
        return _PARSERS[kind](data)

    @staticmethod
    def parse(text: str) -> Move:
        """Parse the text notation: ``draw stock``, ``discard 7H``,
        ``go_out KD 4H-5H-6H 9C-9D-7S`` (melds optional)."""
        words = text.split()
        if not words:
            raise MalformedError("empty move", field="type")
        kind, args = words[0].lower(), words[1:]
        if kind == "draw" and len(args) == 1:
            return Move.from_dict({"type": "draw", "source": args[0].lower()})
        if kind == "discard" and len(args) == 1:
            return Move.from_dict({"type": "discard", "card": args[0]})
        if kind == "go_out" and args:
            data: dict[str, Any] = {"type": "go_out", "discard": args[0]}
            if len(args) > 1:
                data["melds"] = [meld.split("-") for meld in args[1:]]
            return Move.from_dict(data)
        raise MalformedError(f"not a move: {text!r}", field="type")


@dataclass(frozen=True, slots=True)
class Draw(Move):
    """Take the top card of the stock or of the discard pile."""

    source: Source
    type = "draw"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "draw", "source": self.source.value}

    def __str__(self) -> str:
        return f"draw {self.source.value}"


@dataclass(frozen=True, slots=True)
class Discard(Move):
    """End the turn by discarding ``card``."""

    card: Card
    type = "discard"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "discard", "card": self.card.code}

    def __str__(self) -> str:
        return f"discard {self.card.code}"


@dataclass(frozen=True, slots=True)
class GoOut(Move):
    """Lay down ``melds`` (or let the engine find them when None) and discard."""

    discard: Card
    melds: tuple[tuple[Card, ...], ...] | None = None
    type = "go_out"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "go_out", "discard": self.discard.code}
        if self.melds is not None:
            out["melds"] = [[c.code for c in meld] for meld in self.melds]
        return out

    def __str__(self) -> str:
        text = f"go_out {self.discard.code}"
        if self.melds is not None:
            text += "".join(" " + "-".join(c.code for c in meld) for meld in self.melds)
        return text


def _card(value: Any, field: str) -> Card:
    if not isinstance(value, str):
        raise MalformedError(f"{field} must be a card code", field=field)
    try:
        return Card.parse(value)
    except MalformedError as exc:
        raise MalformedError(exc.message, field=field) from None


def _draw(data: Mapping[str, Any]) -> Move:
    try:
        return Draw(Source(data.get("source")))
    except ValueError:
        raise MalformedError("source must be 'stock' or 'discard'", field="source") from None


def _discard(data: Mapping[str, Any]) -> Move:
    return Discard(_card(data.get("card"), "card"))


def _go_out(data: Mapping[str, Any]) -> Move:
    discard = _card(data.get("discard"), "discard")
    raw = data.get("melds")
    if raw is None:
        return GoOut(discard)
    if not isinstance(raw, list) or len(raw) > MAX_MELDS:
        raise MalformedError(f"melds must be a list of at most {MAX_MELDS} melds", field="melds")
    melds = []
    for meld in raw:
        if not isinstance(meld, list) or not 1 <= len(meld) <= MAX_MELD_CARDS:
            raise MalformedError("each meld must be a non-empty list of card codes", field="melds")
        melds.append(tuple(_card(code, "melds") for code in meld))
    return GoOut(discard, tuple(melds))


_PARSERS = {"draw": _draw, "discard": _discard, "go_out": _go_out}
_FIELDS = {
    "draw": {"type", "source"},
    "discard": {"type", "card"},
    "go_out": {"type", "discard", "melds"},
}
