"""Solving one hand: costs and wilds prepared for :mod:`service.engine._solver_core`,
and the optimal plan turned back into melds and deadwood (used by
:mod:`service.engine.solver`, which adds the caches and the table search).

In mode free without table melds, :class:`_Free` has the C extension do the
same from a hand's ids to its melds' ids; the Python here stays the reference
(``tests/engine/test_solver_native.py``) and the fallback."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from functools import lru_cache
from itertools import count
from operator import attrgetter
from types import ModuleType

from service.engine import _solver_core as core
from service.engine.cards import _CARDS, JOKER_ID, Card, Rank
from service.engine.melds import (
    Arrangement,
    LayOff,
    Meld,
    MeldKind,
    _split,
    classify_meld,
)
from service.engine.rules import Aces, Options, points_table


class _Table:
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
            nat, wr, jk = _split(meld.cards, wild_rank)
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


def _solve_hand(
    cards: Sequence[Card],
    wild_rank: Rank,
    options: Options,
    table: _Table | None,
    must_meld: bool = False,
) -> Solved | None:
    """(points, meld card groups, deadwood, lay-offs) for a hand without table runs.

    ``must_meld``: only arrangements without deadwood count (None if there is none).
    """
    nat, wr, jk = _split(cards, wild_rank)
    one = options.max_wilds_per_meld is not None
    high = options.aces is Aces.HIGH_OR_LOW
    jk_cost = 0 if table else 20
    free_wr = table is not None and not one and table.any_set is not None
    set_rank = table.set_rank if table else {}
    table_pts = points_table(wild_rank, options)
    wr_pts = table_pts[wr[0].id] if wr else 0
    pts: Sequence[int] = table_pts  # the search reads the costs of the hand's cards only
    if must_meld:
        pts = _ALL_INF
        jk_cost = wr_pts = core.INF
    elif set_rank:  # the table's sets take cards of their ranks for free
        pts = [0 if (i >> 2) in set_rank else p for i, p in enumerate(table_pts)]
    if one:
        slots = len(table.wild_sets) if table else 0
        n_j = len(jk)
        wr_cost = 0 if (wild_rank - 1) in set_rank else wr_pts
        wr_ids = [c.id for c in wr]
        live = _live([c.id for c in nat] + wr_ids, high, wild_rank) + wr_ids  # may be wild
        if must_meld and len(live) < len(nat) + len(wr):
            return None
        leaf = (n_j, jk_cost, slots, wr_cost)
        res = core.solve_one(live, n_j, (wild_rank - 1) * 4, pts, leaf, high)
    else:
        pool = list(wr) + list(jk)
        costs = sorted(
            0 if free_wr and not must_meld else jk_cost if c.is_joker else wr_pts for c in pool
        )
        cheap = [0]
        for x in costs:
            cheap.append(min(core.INF, cheap[-1] + x))
        allwild_ok = options.all_wild_melds or bool(wr)
        live = [c.id for c in nat]
        if len(pool) < 2:
            live = _live(live, high, wild_rank)
        if must_meld and len(live) < len(nat):
            return None
        res = core.solve_free(live, len(pool), pts, cheap, allwild_ok, high)
    if res.value >= core.INF:
        assert must_meld
        return None
    return _assembled(res, nat, wr, jk, wild_rank, options, table, one)


def _assembled(
    res: core.Result,
    nat: list[Card],
    wr: list[Card],
    jk: list[Card],
    wild_rank: Rank,
    options: Options,
    table: _Table | None,
    one: bool,
) -> Solved:
    """The plan ``res`` of the search over a hand (its naturals, wild-rank cards
    and jokers) turned into cards."""
    if one:
        pool = list(jk) + [Card.from_id(i) for i in res.designated]
        return _assemble(res, nat + wr, pool, wild_rank, options, table, one)
    return _assemble(res, nat, wr + jk, wild_rank, options, table, one)


def _live(naturals: Sequence[int], high: bool, wild_rank: Rank) -> list[int]:
    """The natural cards (ids) that have a partner: another card of their
    rank, or of their suit one or two ranks away.  A meld with at most one wild
    needs two natural cards, so the others are deadwood whatever happens.
    Wild-rank cards are left out (the caller decides about them)."""
    x = core.pack(naturals)
    wr = wild_rank - 1
    out = []
    for i in naturals:
        r = i >> 2
        if r == wr:
            continue
        if (x >> (r << 4)) & 0xFFFF != 1 << ((i & 3) << 2):  # a twin or another suit
            out.append(i)
            continue
        for q in _NEAR_HIGH[r] if high else _NEAR[r]:
            if (x >> (((q << 2) | (i & 3)) << 2)) & 15:
                out.append(i)
                break
    return out


def _going_out_discards(
    cards: Sequence[Card], wild_rank: Rank, options: Options, candidates: Sequence[int]
) -> list[tuple[int, Solved]]:
    """The ``candidates`` (ids of cards among ``cards``) without which every other
    card can be melded, in order, each with how: what ``_solve_hand(cards less
    that card, ..., must_meld=True)`` answers.  The natural candidates take one
    search call, whose searches share their memo and so find the very plans
    that a search each would; a wild candidate (fewer wilds left) is solved on
    its own.

    >>> from service.engine.cards import parse_cards
    >>> from service.engine.rules import Options
    >>> hand = parse_cards("4H 5H 6H 7H 9C 9D 9S")
    >>> for i, solved in _going_out_discards(hand, Rank.KING, Options(), [c.id for c in hand]):
    ...     print(Card.from_id(i), [" ".join(str(c) for c in g) for g in solved[1]])
    4H ['5H 6H 7H', '9C 9D 9S']
    7H ['4H 5H 6H', '9C 9D 9S']
    """
    # in id order, as the memos key a hand, so that wilds come in the same order
    cards = sorted(cards, key=_card_id)
    ids = [c.id for c in cards]
    nat, wr, jk = _split(cards, wild_rank)
    nat_ids = [c.id for c in nat]
    wr_ids = [c.id for c in wr]
    wr_lo = (wild_rank - 1) * 4
    drops = sorted({c for c in candidates if c != JOKER_ID and not wr_lo <= c < wr_lo + 4})
    high = options.aces is Aces.HIGH_OR_LOW
    one = options.max_wilds_per_meld is not None
    inf = core.INF
    if not drops:
        found = []
    elif one:  # the costs of _solve_hand's must_meld, without a table
        leaf = (len(jk), inf, 0, inf)
        found = core.solve_one_each(nat_ids + wr_ids, len(jk), wr_lo, _ALL_INF, leaf, high, drops)
    else:
        n_pool = len(wr) + len(jk)
        allwild_ok = options.all_wild_melds or bool(wr)
        cheap = [0] + [inf] * n_pool
        found = core.solve_free_each(nat_ids, n_pool, _ALL_INF, cheap, allwild_ok, high, drops)
    solved: dict[int, Solved] = {}
    for d, res in zip(drops, found, strict=True):
        if res.value < inf:
            at = nat_ids.index(d)
            rest = nat[:at] + nat[at + 1 :]
            solved[d] = _assembled(res, rest, wr, jk, wild_rank, options, None, one)
    out = []
    for c in candidates:
        if c in solved:
            out.append((c, solved[c]))
        elif c == JOKER_ID or wr_lo <= c < wr_lo + 4:
            at = ids.index(c)
            rest = cards[:at] + cards[at + 1 :]
            alone = _solve_hand(rest, wild_rank, options, None, must_meld=True)
            if alone is not None:
                out.append((c, alone))
    return out


_ALL_INF = (core.INF,) * 53
"""Every card's cost when all must be melded."""


_NEAR = [[q for q in (r - 2, r - 1, r + 1, r + 2) if 0 <= q < 13] for r in range(13)]
_NEAR_HIGH = [n + {0: [12, 11], 11: [0], 12: [0]}.get(r, []) for r, n in enumerate(_NEAR)]


def _assemble(
    res: core.Result,
    naturals: Sequence[Card],
    pool: list[Card],
    wild_rank: Rank,
    options: Options,
    table: _Table | None,
    one: bool,
) -> tuple[int, list[list[Card]], list[Card], dict[int, list[Card]]]:
    if res.value >= core.INF:
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
    cards: list[Card], wild_rank: Rank, options: Options, table: _Table, out: dict[int, list[Card]]
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


def _finish(
    points: int,
    groups: list[list[Card]],
    deadwood: list[Card],
    layoffs: dict[int, list[Card]],
    wild_rank: Rank,
    options: Options,
) -> Arrangement:
    return Arrangement(
        _melds(groups, wild_rank, options),
        tuple(sorted(deadwood, key=_card_id)),  # as cards sort, without their __lt__
        points,
        tuple([LayOff(t, tuple(cs)) for t, cs in sorted(layoffs.items())]) if layoffs else (),
    )


_card_id = attrgetter("id")


def _melds(groups: list[list[Card]], wild_rank: Rank, options: Options) -> tuple[Meld, ...]:
    """The melds of a plan's groups of cards."""
    return tuple([_meld(tuple(sorted([c.id for c in g])), wild_rank, options) for g in groups])


NATIVE_PLANS = True
"""Whether the C extension, when built, also prepares hands and assembles their
plans (mode free, no table melds: :func:`_native_free`).  Tests turn it off to
compare with the Python here, over the same search."""

Groups = tuple[tuple[int, ...], ...]
"""The C's plan in cards: each meld's card ids, ascending."""


def _native_free(wild_rank: Rank, options: Options, n_cards: int) -> _Free | None:
    """What solves a hand of ``n_cards`` without table melds all in C (mode
    free), or None where the Python does it (mode one, no extension, more
    cards than the C takes): the per-rules constants are made once, looked
    up by the very ``options`` object (options are interned: codec.py), so
    that no call hashes or compares an :class:`Options`."""
    native = core.native
    if native is None or not NATIVE_PLANS or n_cards > native.MAX_CARDS:
        return None
    key = (id(options), wild_rank)
    hit = _FREE.get(key)
    if hit is None or hit[0] is not options:
        if len(_FREE) >= 512:
            _FREE.clear()
        free = None if options.max_wilds_per_meld is not None else _Free(native, wild_rank, options)
        hit = _FREE[key] = (options, free)  # holds options: its id is not reused meanwhile
    return hit[1]


class _Free:
    """A hand's arrangement and going-out checks done in C, mode free, no table:
    the C's ``arrange_free`` and ``go_out_free`` find the plans that
    :func:`_solve_hand` finds and place the wilds as :func:`_assemble` does,
    card for card; the groups of ids become melds here (through :func:`_meld`,
    with a dict in front of it keyed by the ids and these rules' token, which
    hashes in C, unlike an :class:`Options`)."""

    __slots__ = ("native", "args", "token", "wild_rank", "options")

    def __init__(self, native: ModuleType, wild_rank: Rank, options: Options) -> None:
        self.native = native
        pts = array("q", points_table(wild_rank, options)).tobytes()  # what the C reads
        high = options.aces is Aces.HIGH_OR_LOW
        self.args = (pts, (wild_rank - 1) * 4, options.all_wild_melds, high)
        self.token = next(_TOKENS)
        self.wild_rank = wild_rank
        self.options = options

    def arrangement(self, ids: Sequence[int]) -> Arrangement:
        """:func:`_solve_hand` then :func:`_finish` of the hand of these card ids."""
        groups, deadwood, points = self.native.arrange_free(ids, *self.args, False)
        return Arrangement(self.melds_of(groups), tuple([_CARDS[i] for i in deadwood]), points)

    def melded(self, ids: Sequence[int]) -> tuple[Meld, ...] | None:
        """The melds of ``_solve_hand(..., must_meld=True)``, or None."""
        found = self.native.arrange_free(ids, *self.args, True)
        return None if found is None else self.melds_of(found[0])

    def going_out(
        self, ids: Sequence[int], candidates: Sequence[Card]
    ) -> list[tuple[Card, tuple[Meld, ...]]]:
        """What :func:`_going_out_discards` finds, its plans as melds."""
        if not candidates:  # (the first draws of a round, mostly: no card is worth the floor)
            return []
        found = self.native.go_out_free(ids, *self.args, [c.id for c in candidates])
        return [
            (_CARDS[c.id], self.melds_of(groups))
            for c, groups in zip(candidates, found, strict=True)
            if groups is not None
        ]

    def melds_of(self, groups: Groups) -> tuple[Meld, ...]:
        """The melds of the C's groups, as :func:`_melds` makes them."""
        token = self.token
        return tuple([_MELDS.get((ids, token)) or self._new_meld(ids) for ids in groups])

    def _new_meld(self, ids: tuple[int, ...]) -> Meld:
        if len(_MELDS) >= _MELDS_KEPT:
            _MELDS.clear()
        meld = _MELDS[ids, self.token] = _meld(ids, self.wild_rank, self.options)
        return meld


_FREE: dict[tuple[int, Rank], tuple[Options, _Free | None]] = {}
_TOKENS = count()
_MELDS: dict[tuple[tuple[int, ...], int], Meld] = {}
_MELDS_KEPT = 8192  # as many as _meld's own memo


@lru_cache(maxsize=8192)
def _meld(ids: tuple[int, ...], wild_rank: Rank, options: Options) -> Meld:
    """The meld that a group of a plan forms (valid by construction), keyed by
    its sorted card ids: :func:`classify_meld` puts the cards in order itself,
    and the same groups come back hand after hand (a hand changes by a card a
    turn), so most are classified once."""
    meld = classify_meld([Card.from_id(i) for i in ids], wild_rank, options)
    assert meld is not None, ids
    return meld
