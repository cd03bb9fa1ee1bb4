"""Melds: sets and runs, their validity, and arrangements of a hand.

>>> from service.engine.cards import parse_cards
>>> Meld(MeldKind.RUN, tuple(parse_cards("4H 5H 6H"))).to_dict()
{'kind': 'run', 'cards': ['4H', '5H', '6H']}
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from service.engine.cards import JOKER_ID, Card, Rank
from service.engine.options import Aces, Options


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


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


def split_wilds(
    cards: Sequence[Card], wild_rank: Rank
) -> tuple[list[Card], list[Card], list[Card]]:
    """(naturals, wild-rank cards, jokers)."""
    nat: list[Card] = []
    wr: list[Card] = []
    jk: list[Card] = []
    wr_lo = (wild_rank - 1) * 4
    for c in cards:
        if c.id == JOKER_ID:
            jk.append(c)
        elif wr_lo <= c.id < wr_lo + 4:
            wr.append(c)
        else:
            nat.append(c)
    return nat, wr, jk


def _wild_ok(n_wild: int, n_self: int, options: Options, extra: int) -> bool:
    if n_self == 0 and not options.all_wild_melds:
        return False
    limit = options.max_wilds_per_meld
    return limit is None or n_wild <= limit + extra


def _as_set(
    cards: Sequence[Card], wild_rank: Rank, options: Options, extra: int = 0
) -> Meld | None:
    if len(cards) < 3:
        return None
    nat, wr, jk = split_wilds(cards, wild_rank)
    if nat:
        if len({c.id >> 2 for c in nat}) != 1:
            return None
        n_self, n_wild = len(nat), len(wr) + len(jk)
    else:  # wild-rank cards play as themselves: a set of the wild rank
        n_self, n_wild = len(wr), len(jk)
    if not _wild_ok(n_wild, n_self, options, extra):
        return None
    return Meld(MeldKind.SET, tuple(sorted(nat) + sorted(wr) + jk))


def _as_run(
    cards: Sequence[Card], wild_rank: Rank, options: Options, extra: int = 0
) -> Meld | None:
    n = len(cards)
    if n < 3 or n > 13:
        return None
    nat, wr, jk = split_wilds(cards, wild_rank)
    suits = {c.id & 3 for c in nat}
    if len(suits) > 1:
        return None
    cand_suits: list[int | None] = [*(suits or {c.id & 3 for c in wr})]
    high_ok = options.aces is Aces.HIGH_OR_LOW
    best: tuple[int, list[Card | None], int] | None = None
    for suit in cand_suits or [None]:  # None: wild cards only (all_wild_melds)
        own = [c for c in wr if c.id & 3 == suit]
        for n_wr_self in (1, 0) if own else (0,):
            selfs = nat + own[:n_wr_self]
            wilds = list(wr)
            if n_wr_self:
                wilds.remove(own[0])
            wilds += jk
            has_ace = any(c.id < 4 for c in selfs)
            for high in (False, True) if (high_ok and has_ace) else (False,):
                pos = [14 if (high and c.id < 4) else (c.id >> 2) + 1 for c in selfs]
                if len(set(pos)) != len(pos):
                    continue
                if not _wild_ok(len(wilds), len(selfs), options, extra):
                    continue
                lo_bound, hi_bound = (2, 14) if high else (1, 13)
                if pos:
                    lo_p, hi_p = min(pos), max(pos)
                    if hi_p - lo_p + 1 > n:
                        continue
                    hi = min(hi_bound, lo_p + n - 1)
                else:
                    hi = lo_bound + n - 1
                lo = hi - n + 1
                slots: list[Card | None] = [None] * n
                for c, p in zip(selfs, pos, strict=True):
                    slots[p - lo] = c
                rest = iter(sorted(wilds))
                order = [c if c is not None else next(rest) for c in slots]
                if best is None or len(wilds) < best[2]:
                    best = (lo, list(order), len(wilds))
    if best is None:
        return None
    return Meld(MeldKind.RUN, tuple(c for c in best[1] if c is not None))


def classify_meld(cards: Sequence[Card], wild_rank: Rank, options: Options) -> Meld | None:
    """The valid meld these cards form, or None (RULES.md section 5).

    The kind is chosen for you: a set when the cards form both a set and a run.
    A set lists its natural cards, then the wild-rank cards, then jokers; a run
    lists its cards by the position each plays, wilds filling the gaps (spare
    wilds extend the run upwards first).

    >>> from service.engine.cards import parse_cards
    >>> o = Options()
    >>> print(classify_meld(parse_cards("7C 5H 7D"), Rank.SEVEN, o))
    [5H 7C 7D]
    >>> m = classify_meld(parse_cards("8H 6H 7H"), Rank.SEVEN, o)
    >>> m.kind.value, str(m)
    ('run', '[6H 7H 8H]')
    >>> classify_meld(parse_cards("KH AH 2H"), Rank.SEVEN, Options(aces=Aces.HIGH_OR_LOW))
    >>> print(classify_meld(parse_cards("KH AH QH"), Rank.SEVEN, Options(aces=Aces.HIGH_OR_LOW)))
    [QH KH AH]
    >>> classify_meld(parse_cards("JK JK JK"), Rank.SEVEN, o) is None
    True
    """
    return _as_set(cards, wild_rank, options) or _as_run(cards, wild_rank, options)


def extend_meld(
    meld: Meld, cards: Sequence[Card], wild_rank: Rank, options: Options
) -> Meld | None:
    """``meld`` plus ``cards`` as one valid meld of the same kind (a lay-off), or None.

    The cards already in ``meld`` may change the position or rank they stand
    for (a run's wild may move to an end); the meld's kind may not change and
    ``cards`` must not be empty.

    Interpretation of RULES.md section 7 (``lay_off``): "a joker may be laid
    off onto any meld" means a joker among ``cards`` is always accepted.  A
    laid-off joker may fill a gap of the run without counting against
    ``max_wilds_per_meld``; a laid-off joker that finds no place (the run is
    already 13 cards long, or it is simply not needed) rides on the meld and
    is listed at its end.  Wild-rank cards get no such licence.  Jokers laid
    off onto ``meld`` before keep theirs: as many of its jokers as it needs
    beyond ``max_wilds_per_meld`` count as laid off.

    >>> from service.engine.cards import parse_cards
    >>> o = Options()
    >>> run = classify_meld(parse_cards("4H 5H 6H"), Rank.SEVEN, o)
    >>> print(extend_meld(run, parse_cards("8H 7C"), Rank.SEVEN, o))
    [4H 5H 6H 7C 8H]
    >>> extend_meld(run, parse_cards("9H"), Rank.SEVEN, o) is None
    True
    >>> one = Options(max_wilds_per_meld=1)
    >>> grown = extend_meld(run, parse_cards("JK"), Rank.SEVEN, one)
    >>> print(grown, extend_meld(grown, parse_cards("JK"), Rank.SEVEN, one))
    [4H 5H 6H JK] [4H 5H 6H JK JK]
    >>> extend_meld(grown, parse_cards("7C"), Rank.SEVEN, one) is None  # no licence
    True
    """
    if not cards:
        return None
    check = _as_set if meld.kind is MeldKind.SET else _as_run
    own = [c for c in meld.cards if not c.is_joker]
    own_jokers = [c for c in meld.cards if c.is_joker]
    laid = next(
        (
            r
            for r in range(len(own_jokers) + 1)
            if _with_laid_jokers(check, own + own_jokers[r:], own_jokers[:r], wild_rank, options)
        ),
        0,
    )
    return _with_laid_jokers(
        check,
        own + own_jokers[laid:] + [c for c in cards if not c.is_joker],
        own_jokers[:laid] + [c for c in cards if c.is_joker],
        wild_rank,
        options,
    )


def _with_laid_jokers(
    check: Callable[[Sequence[Card], Rank, Options, int], Meld | None],
    cards: Sequence[Card],
    jokers: Sequence[Card],
    wild_rank: Rank,
    options: Options,
) -> Meld | None:
    """``cards`` and the laid-off ``jokers`` as one meld of ``check``'s kind: the
    jokers placed in it do not count against ``max_wilds_per_meld``, the others
    ride at its end."""
    for placed in range(len(jokers) + 1):
        found = check([*cards, *jokers[:placed]], wild_rank, options, placed)
        if found is not None:
            return Meld(found.kind, found.cards + tuple(jokers[placed:]))
    return None
