"""Records the game produces: events and round results, with their JSON forms.

>>> e = Event("discarded", {"seat": 1, "card": "7H"})
>>> e.is_public
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from service.engine.cards import Card, Rank, parse_cards
from service.engine.melds import LayOff, Meld, MeldKind


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened.  ``seat`` is None for a public event, else the
    only seat allowed to see it (e.g. the card it drew from the stock)."""

    type: str
    data: dict[str, Any]
    seat: int | None = None

    @property
    def is_public(self) -> bool:
        return self.seat is None

    def to_dict(self) -> dict[str, Any]:
        out = {"type": self.type, **self.data}
        if self.seat is not None:
            out["private"] = True
        return out


def meld_from_dict(data: dict[str, Any]) -> Meld:
    return Meld(MeldKind(data["kind"]), tuple(parse_cards(data["cards"])))


@dataclass(frozen=True, slots=True)
class HandResult:
    """How one hand scored in a round.  ``points`` is the round score: the
    deadwood penalty times the round multiplier, plus any false go-out penalty."""

    seat: int
    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]
    points: int
    penalty: int = 0
    layoffs: tuple[LayOff, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seat": self.seat,
            "melds": [m.to_dict() for m in self.melds],
            "deadwood": [c.code for c in self.deadwood],
            "points": self.points,
        }
        if self.penalty:
            out["penalty"] = self.penalty
        if self.layoffs:
            out["layoffs"] = [
                {"target": lo.target, "cards": [c.code for c in lo.cards]} for lo in self.layoffs
            ]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HandResult:
        return cls(
            seat=data["seat"],
            melds=tuple(meld_from_dict(m) for m in data["melds"]),
            deadwood=tuple(parse_cards(data["deadwood"])),
            points=data["points"],
            penalty=data.get("penalty", 0),
            layoffs=tuple(
                LayOff(lo["target"], tuple(parse_cards(lo["cards"])))
                for lo in data.get("layoffs", ())
            ),
        )


@dataclass(frozen=True, slots=True)
class RoundResult:
    """A finished round: every hand revealed with its melds and points.
    ``ended_by`` is ``went_out`` or ``turn_limit`` (``max_turns_per_round``)."""

    number: int
    wild_rank: Rank
    went_out: int | None
    hands: tuple[HandResult, ...]
    multiplier: int = 1
    ended_by: str = "went_out"
    table: tuple[Meld, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "number": self.number,
            "wild_rank": self.wild_rank.symbol,
            "went_out": self.went_out,
            "ended_by": self.ended_by,
            "multiplier": self.multiplier,
            "hands": [h.to_dict() for h in self.hands],
        }
        if self.table:
            out["table"] = [m.to_dict() for m in self.table]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoundResult:
        return cls(
            number=data["number"],
            wild_rank=Rank.parse(data["wild_rank"]),
            went_out=data["went_out"],
            hands=tuple(HandResult.from_dict(h) for h in data["hands"]),
            multiplier=data.get("multiplier", 1),
            ended_by=data.get("ended_by", "went_out"),
            table=tuple(meld_from_dict(m) for m in data.get("table", ())),
        )
