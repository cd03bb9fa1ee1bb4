"""Records the game produces: events and round results, with their JSON forms.

>>> e = Event("discarded", {"seat": 1, "card": "7H"})
>>> e.is_public
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import orjson

from service.engine.cards import Card, Rank, cards_from_codes
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
    return Meld(MeldKind(data["kind"]), tuple(cards_from_codes(data["cards"])))


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
            deadwood=tuple(cards_from_codes(data["deadwood"])),
            points=data["points"],
            penalty=data.get("penalty", 0),
            layoffs=tuple(
                LayOff(lo["target"], tuple(cards_from_codes(lo["cards"])))
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


class ResultLog(Sequence[RoundResult]):
    """The finished rounds of a game.  They never change once recorded, so they
    are kept in their JSON form -- as JSON text when loaded from storage, parsed
    only when something reads them -- and turned into :class:`RoundResult`
    objects only when read one by one.

    >>> log = ResultLog()
    >>> len(log), log.dicts(), log.json()
    (0, [], b'[]')
    >>> ResultLog.from_json(b'[{"number": 1}]').dicts()
    [{'number': 1}]
    """

    __slots__ = ("_dicts", "_json")

    def __init__(self, dicts: Iterable[dict[str, Any]] = ()) -> None:
        self._dicts: list[dict[str, Any]] | None = list(dicts)
        self._json: bytes | None = None

    @classmethod
    def from_json(cls, text: bytes) -> ResultLog:
        """A log read from its :meth:`json` text (parsed on first use)."""
        log = cls()
        log._dicts, log._json = None, bytes(text)
        return log

    def _loaded(self) -> list[dict[str, Any]]:
        if self._dicts is None:
            assert self._json is not None
            self._dicts = orjson.loads(self._json)
        return self._dicts

    @overload
    def __getitem__(self, index: int) -> RoundResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[RoundResult]: ...

    def __getitem__(self, index: int | slice) -> RoundResult | list[RoundResult]:
        if isinstance(index, slice):
            return [RoundResult.from_dict(d) for d in self._loaded()[index]]
        return RoundResult.from_dict(self._loaded()[index])

    def __len__(self) -> int:
        return len(self._loaded())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ResultLog):
            return self._loaded() == other._loaded()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def append(self, result: RoundResult) -> None:
        self._loaded().append(result.to_dict())
        self._json = None

    def dicts(self) -> list[dict[str, Any]]:
        """The JSON form of every result (a new list; the dicts are shared)."""
        return list(self._loaded())

    def json(self) -> bytes:
        """The JSON text of :meth:`dicts` (kept, so a log loaded and saved again
        is never parsed)."""
        if self._json is None:
            self._json = orjson.dumps(self._dicts)
        return self._json
