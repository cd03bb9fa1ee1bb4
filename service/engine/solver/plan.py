"""The search's optimal plan turned into cards: each meld's natural cards and the
wilds it needs, spare wilds placed where there is room, what the table takes
for free laid off (``lay_off``), and the melds and deadwood of an
:class:`~service.engine.melds.Arrangement`."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from service.engine.byte_cache import LRUMemo
from service.engine.cards import Card, Rank
from service.engine.melds import Arrangement, LayOff, Meld, MeldKind, classify_meld, split_wilds
from service.engine.options import Options
from service.engine.rules import points_table
from service.engine.solver.python_search import INF, Result


class TableInfo:
    """What the table melds accept for free (lay_off variant)."""

    def __init__(self, table: Sequence[Meld], wild_rank: Rank, options: Options) -> None:
        self.melds = table
        self.set_rank: dict[int, int] = {}  # rank index (0..12) -> table index
        self.wild_sets: list[int] = []  # table sets that may take one wild-rank card
        self.any_set: int | None = None
        self.flex: list[int] = []  # all-wild table sets: take naturals of any one rank
        for t, meld in enumerate(table):
            if meld.kind is not MeldKind.SET:
                continue
            nat, wr, jk = split_wilds(meld.cards, wild_rank)
            if self.any_set is None:
                self.any_set = t
            if nat:
                self.set_rank.setdefault(nat[0].id >> 2, t)
                n_wild = len(wr) + len(jk)
            elif options.max_wilds_per_meld is None:
                self.flex.append(t)
                n_wild = len(jk)
            else:
                self.set_rank.setdefault(wild_rank - 1, t)
                n_wild = len(jk)
            if options.max_wilds_per_meld is not None and n_wild == 0:
                self.wild_sets.append(t)


Solved = tuple[int, list[list[Card]], list[Card], dict[int, list[Card]]]


def assembled(
    res: Result,
    nat: list[Card],
    wr: list[Card],
    jk: list[Card],
    wild_rank: Rank,
    options: Options,
    table: TableInfo | None,
    one: bool,
) -> Solved:
    """The plan ``res`` of the search over a hand (its naturals, wild-rank cards
    and jokers) turned into cards."""
    if one:
        pool = list(jk) + [Card.from_id(i) for i in res.designated]
        return _assemble(res, nat + wr, pool, wild_rank, options, table, one)
    return _assemble(res, nat, wr + jk, wild_rank, options, table, one)


def _assemble(
    res: Result,
    naturals: Sequence[Card],
    pool: list[Card],
    wild_rank: Rank,
    options: Options,
    table: TableInfo | None,
    one: bool,
) -> Solved:
    if res.value >= INF:
        raise AssertionError("no arrangement found")
    pts_table = points_table(wild_rank, options)
    left = sorted([c.id for c in naturals])  # less the ones the plan uses: the deadwood
    for i in res.designated:
        left.remove(i)
    groups: list[list[Card]] = []
    needs: list[int] = []
    for ids, need, _kind in res.melds:
        groups.append(list(map(Card.from_id, ids)))
        needs.append(need)
        for i in ids:
            left.remove(i)
    deadwood = list(map(Card.from_id, left))
    wl = res.leftover
    if table is None and wl == 0 and sum(needs) == len(pool):
        # the common case, in short: each wild fills a need, in the order below
        # (jokers first, the others as they come: all of the wild rank, they cost alike)
        _fill_needs(groups, needs, sorted(pool, key=_not_joker))
        return sum(pts_table[c.id] for c in deadwood), groups, deadwood, {}
    allwild = not one and wl >= 3 and (options.all_wild_melds or any(not c.is_joker for c in pool))
    # capacity of each meld for spare wilds
    caps: list[int] = []
    for g, need in zip(groups, needs, strict=True):
        size = len(g) + need
        if one:
            caps.append(1 if need == 0 and (size < 13 or _is_set(g)) else 0)
        else:
            caps.append(1 << 20 if _is_set(g) else 13 - size)
    n_dump = 0 if allwild else min(wl, sum(caps))
    n_left = 0 if allwild else wl - n_dump

    def leftover_cost(c: Card) -> int:
        if table is not None and c.is_joker:
            return 0
        return pts_table[c.id]

    pool = sorted(pool, key=lambda c: (leftover_cost(c), not c.is_joker))
    spare, placed = pool[:n_left], pool[n_left:]
    # needs take jokers first, so that an all-wild group keeps a wild-rank card
    placed.sort(key=_not_joker)
    if allwild and not options.all_wild_melds:
        keep = next(c for c in reversed(placed) if not c.is_joker)
        placed.remove(keep)
        placed.append(keep)
    rest = _fill_needs(groups, needs, placed)
    if allwild:
        groups.append(rest)
    else:
        for g, cap in zip(groups, caps, strict=True):
            take = min(cap, len(rest))
            g += rest[:take]
            rest = rest[take:]
        assert not rest
    layoffs: dict[int, list[Card]] = {}
    if table is not None:
        deadwood = _lay_off_spares(deadwood + spare, wild_rank, options, table, layoffs)
    else:
        deadwood += spare
    points = sum(pts_table[c.id] for c in deadwood)
    return points, groups, deadwood, layoffs


def _not_joker(card: Card) -> bool:
    return not card.is_joker


def _fill_needs(groups: list[list[Card]], needs: list[int], placed: list[Card]) -> list[Card]:
    """Give each group the wilds it needs, in the order of ``placed``; the wilds left."""
    k = 0
    for g, need in zip(groups, needs, strict=True):
        if need:
            g += placed[k : k + need]
            k += need
    return placed[k:]


def _is_set(ids: Sequence[Card]) -> bool:
    return len(ids) > 1 and ids[0].id >> 2 == ids[1].id >> 2


def _lay_off_spares(
    cards: list[Card],
    wild_rank: Rank,
    options: Options,
    table: TableInfo,
    out: dict[int, list[Card]],
) -> list[Card]:
    """Lay off what the table takes for free; returns the rest."""
    keep: list[Card] = []
    slots = list(table.wild_sets)
    wr_id = wild_rank - 1
    for c in cards:
        if c.is_joker:
            out.setdefault(table.any_set if table.any_set is not None else 0, []).append(c)
        elif (c.id >> 2) in table.set_rank:
            out.setdefault(table.set_rank[c.id >> 2], []).append(c)
        elif (
            c.id >> 2 == wr_id and options.max_wilds_per_meld is None and table.any_set is not None
        ):
            out.setdefault(table.any_set, []).append(c)
        elif c.id >> 2 == wr_id and slots:
            out.setdefault(slots.pop(), []).append(c)
        else:
            keep.append(c)
    return keep


def finish(
    points: int,
    groups: list[list[Card]],
    deadwood: list[Card],
    layoffs: dict[int, list[Card]],
    wild_rank: Rank,
    options: Options,
) -> Arrangement:
    return Arrangement(
        melds_of(groups, wild_rank, options),
        tuple(sorted(deadwood, key=_card_id)),  # as cards sort, without their __lt__
        points,
        tuple([LayOff(t, tuple(cs)) for t, cs in sorted(layoffs.items())]) if layoffs else (),
    )


_card_id = attrgetter("id")


def melds_of(groups: list[list[Card]], wild_rank: Rank, options: Options) -> tuple[Meld, ...]:
    """The melds of a plan's groups of cards."""
    return tuple([meld_of(tuple(sorted([c.id for c in g])), wild_rank, options) for g in groups])


MELDS = LRUMemo("solver.melds", 0.05)
"""Memo of :func:`meld_of`."""


@MELDS.memoize
def meld_of(ids: tuple[int, ...], wild_rank: Rank, options: Options) -> Meld:
    """The meld that a group of a plan forms (valid by construction), keyed by
    its sorted card ids: :func:`classify_meld` puts the cards in order itself,
    and the same groups come back hand after hand (a hand changes by a card a
    turn), so most are classified once."""
    meld = classify_meld([Card.from_id(i) for i in ids], wild_rank, options)
    assert meld is not None, ids
    return meld
