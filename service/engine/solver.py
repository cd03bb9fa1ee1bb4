"""The hand solver: the arrangement of a hand that leaves the fewest penalty points.

The search itself lives in :mod:`service.engine._solver_core`; this module
prepares the problem (costs, wilds), turns the optimal plan back into cards,
and handles melds lying on the table (``lay_off``).

>>> from service.engine.cards import parse_cards
>>> from service.engine.rules import Options
>>> a = best_arrangement(parse_cards("2C 2D 8S 9S JH QH KH"), Rank.SEVEN, Options())
>>> [str(m) for m in a.melds], a.points
(['[JH QH KH]'], 21)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations, product

from service.engine import _solver_core as core
from service.engine.cards import Card, Rank
from service.engine.melds import (
    Arrangement,
    LayOff,
    Meld,
    MeldKind,
    _split,
    classify_meld,
    extend_meld,
)
from service.engine.rules import Aces, Options, card_points


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
    table_pts = _points(wild_rank, options)
    pts = [0] * 53
    for c in cards:
        if not c.is_joker:
            pts[c.id] = 0 if (c.id >> 2) in set_rank else table_pts[c.id]
    wr_pts = table_pts[wr[0].id] if wr else 0
    if must_meld:
        pts = [core.INF] * 53
        jk_cost = wr_pts = core.INF
    if one:
        slots = len(table.wild_sets) if table else 0
        n_j = len(jk)
        wr_cost = 0 if (wild_rank - 1) in set_rank else wr_pts

        def leaf(wl: int, cap: int) -> int:
            d = wl - cap
            if d <= 0:
                return 0
            return min(core.INF, min(d, n_j) * jk_cost + max(0, d - n_j - slots) * wr_cost)

        live = _live(nat + wr, high, wild_rank) + [c.id for c in wr]  # a wild-rank card may be wild
        if must_meld and len(live) < len(nat) + len(wr):
            return None
        res = core.solve_one(core.pack(live), n_j, (wild_rank - 1) * 4, pts, leaf, high)
        pool = list(jk) + [Card.from_id(i) for i in res.designated]
    else:
        pool = list(wr) + list(jk)
        costs = sorted(
            0 if free_wr and not must_meld else jk_cost if c.is_joker else wr_pts for c in pool
        )
        cheap = [0]
        for x in costs:
            cheap.append(min(core.INF, cheap[-1] + x))
        allwild_ok = options.all_wild_melds or bool(wr)
        live = _live(nat, high, wild_rank) if len(pool) < 2 else [c.id for c in nat]
        if must_meld and len(live) < len(nat):
            return None
        res = core.solve_free(core.pack(live), len(pool), pts, cheap, allwild_ok, high)
    if res.value >= core.INF:
        assert must_meld
        return None
    return _assemble(res, nat if not one else nat + wr, pool, wild_rank, options, table, one)


def _points(wild_rank: Rank, options: Options) -> list[int]:
    """card_points of every card id (0..52)."""
    return _points_cached(
        wild_rank, Options(options.aces, options.face_card_points, options.unused_wild_points)
    )


@lru_cache(maxsize=512)
def _points_cached(wild_rank: Rank, options: Options) -> list[int]:
    return [card_points(Card.from_id(i), wild_rank, options) for i in range(53)]


def _live(naturals: Sequence[Card], high: bool, wild_rank: Rank) -> list[int]:
    """The ids of the natural cards that have a partner: another card of their
    rank, or of their suit one or two ranks away.  A meld with at most one wild
    needs two natural cards, so the others are deadwood whatever happens.
    Wild-rank cards are left out (the caller decides about them)."""
    x = core.pack([c.id for c in naturals])
    wr = wild_rank - 1
    out = []
    for c in naturals:
        i = c.id
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
    pts_table = _points(wild_rank, options)
    left = Counter(c.id for c in naturals)
    for i in res.designated:
        left[i] -= 1
    groups: list[list[Card]] = []
    needs: list[int] = []
    for ids, need, _kind in res.melds:
        groups.append([Card.from_id(i) for i in ids])
        needs.append(need)
        for i in ids:
            left[i] -= 1
    deadwood = [Card.from_id(i) for i in sorted(left.elements())]
    wl = res.leftover
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
    placed.sort(key=lambda c: not c.is_joker)
    if allwild and not options.all_wild_melds:
        keep = next(c for c in reversed(placed) if not c.is_joker)
        placed.remove(keep)
        placed.append(keep)
    k = 0
    for g, need in zip(groups, needs, strict=True):
        g += placed[k : k + need]
        k += need
    rest = placed[k:]
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
    melds = []
    for g in groups:
        meld = classify_meld(g, wild_rank, options)
        assert meld is not None, g
        melds.append(meld)
    return Arrangement(
        tuple(melds),
        tuple(sorted(deadwood)),
        points,
        tuple(LayOff(t, tuple(cs)) for t, cs in sorted(layoffs.items())),
    )


def best_arrangement(
    cards: Sequence[Card], wild_rank: Rank, options: Options, table: Sequence[Meld] = ()
) -> Arrangement:
    """The arrangement of ``cards`` leaving the fewest penalty points (RULES.md 6).

    ``points`` is the sum of :func:`card_points` over the deadwood, before any
    round multiplier.  With ``table`` (melds lying on the table, ``lay_off``),
    cards may also be laid off onto those melds: ``layoffs`` holds one entry
    per table meld that receives cards (``target`` = index into ``table``),
    and every table meld plus its cards is valid per :func:`extend_meld`.

    >>> from service.engine.cards import parse_cards
    >>> from service.engine.rules import Options
    >>> best_arrangement(parse_cards("7C AS 5H"), Rank.SEVEN, Options()).points
    13
    >>> a = best_arrangement(parse_cards("7C 7D AS 5H"), Rank.SEVEN, Options())
    >>> [str(m) for m in a.melds], a.points
    (['[5H 7C 7D]'], 1)
    >>> run = classify_meld(parse_cards("4H 5H 6H"), Rank.SEVEN, Options())
    >>> a = best_arrangement(parse_cards("3H 9C"), Rank.SEVEN, Options(), [run])
    >>> a.layoffs, a.points
    ((LayOff(target=0, cards=(Card.parse('3H'),)),), 9)
    """
    return _best_cached(tuple(sorted(cards)), wild_rank, options, tuple(table))


@lru_cache(maxsize=8192)
def _best_cached(
    cards: tuple[Card, ...], wild_rank: Rank, options: Options, table: tuple[Meld, ...]
) -> Arrangement:
    """Memo of the pure solver (a view and its legal moves ask for the same hand)."""
    if not table:
        solved = _solve_hand(cards, wild_rank, options, None)
        assert solved is not None
        return _finish(*solved, wild_rank, options)
    return _best_with_table(list(cards), wild_rank, options, table)


def going_out_melds(
    cards: Sequence[Card], wild_rank: Rank, options: Options
) -> tuple[Meld, ...] | None:
    """Melds using every card of ``cards``, or None when there are none.

    >>> from service.engine.cards import parse_cards
    >>> from service.engine.rules import Options
    >>> [str(m) for m in going_out_melds(parse_cards("4H 5H 6H 9C 9D 7S"), Rank.SEVEN, Options())]
    ['[4H 5H 6H]', '[9C 9D 7S]']
    >>> going_out_melds(parse_cards("4H 5H 6H 9C 9D KD"), Rank.SEVEN, Options()) is None
    True
    """
    return _going_out_cached(tuple(sorted(cards)), wild_rank, options)


@lru_cache(maxsize=8192)
def _going_out_cached(
    cards: tuple[Card, ...], wild_rank: Rank, options: Options
) -> tuple[Meld, ...] | None:
    if not cards:
        return ()
    solved = _solve_hand(cards, wild_rank, options, None, must_meld=True)
    if solved is None:
        return None
    return _finish(*solved, wild_rank, options).melds


def _best_with_table(
    cards: list[Card], wild_rank: Rank, options: Options, table: Sequence[Meld]
) -> Arrangement:
    info = _Table(table, wild_rank, options)
    runs = [t for t, m in enumerate(table) if m.kind is MeldKind.RUN]
    base_rank = dict(info.set_rank)
    best: tuple[int, Arrangement] | None = None
    seen: set[tuple[tuple[int, ...], tuple[int | None, ...]]] = set()
    ranks = sorted({c.id >> 2 for c in cards if not c.is_joker and c.rank != wild_rank})
    plans = _run_layoffs(cards, runs, table, wild_rank, options)
    plans.sort(key=lambda plan: -sum(len(cs) for cs in plan.values()))  # good ones first
    for plan, flex in product(
        plans,
        product(*([None, *ranks] for _ in info.flex)),
    ):
        if flex:
            info.set_rank = dict(base_rank)
            for t, r in zip(info.flex, flex, strict=True):
                if r is not None:
                    info.set_rank.setdefault(r, t)
        hand = Counter(cards)
        for cs in plan.values():
            hand.subtract(cs)
        rest = sorted(hand.elements())
        key = (tuple(c.id for c in rest), flex)
        if key in seen:
            continue
        seen.add(key)
        solved = _solve_hand(rest, wild_rank, options, info)
        assert solved is not None
        points, groups, deadwood, layoffs = solved
        if best is not None and points >= best[0]:
            continue
        for t, cs in plan.items():
            layoffs.setdefault(t, [])[:0] = cs
        for t, cs in layoffs.items():
            assert extend_meld(table[t], cs, wild_rank, options) is not None
        best = (points, _finish(points, groups, deadwood, layoffs, wild_rank, options))
        if points == 0:
            break
    assert best is not None
    return best[1]


def _run_layoffs(
    cards: list[Card], runs: list[int], table: Sequence[Meld], wild_rank: Rank, options: Options
) -> list[dict[int, list[Card]]]:
    """Every way to lay off cards onto the table runs (each valid on its own).

    A run takes at most one card of each natural code; wild-rank cards and
    jokers are interchangeable as wilds, so only their number is chosen
    (with ``max_wilds_per_meld`` also which wild-rank card, as it may play
    as itself).
    """
    one = options.max_wilds_per_meld is not None
    hand = Counter(cards)
    choices: list[tuple[int, list[Counter[Card]]]] = []
    for t in runs:
        meld = table[t]
        suit = next((c.id & 3 for c in meld.cards if not c.is_joker and c.rank != wild_rank), None)
        found: list[Counter[Card]] = [Counter()]
        nat = sorted(
            c
            for c in hand
            if not c.is_joker and c.rank != wild_rank and (suit is None or c.id & 3 == suit)
        )
        wrs = sorted(c for c in hand if c.rank == wild_rank)
        n_jk = hand[Card.JOKER]
        room = 13 - len(meld.cards)
        pool = [c for c in wrs for _ in range(hand[c])]
        wild_picks: list[list[Card]]
        if one:  # one wild-rank card as itself, one as the wild: at most two
            wild_picks = [[]] + [[c] for c in wrs]
            wild_picks += [list(p) for p in sorted(set(combinations(pool, 2)))]
        else:
            wild_picks = [pool[:k] for k in range(min(len(pool), room) + 1)]
        stand_in = [Card.JOKER] * (n_jk + len(pool))
        for counts in product(*((0, 1) for _ in nat)):
            naturals = [c for c, k in zip(nat, counts, strict=True) if k]
            # jokers are the most welcome cards: if these naturals do not
            # fit even with every wild standing in as a joker, skip them
            if naturals and extend_meld(meld, naturals + stand_in, wild_rank, options) is None:
                continue
            for wild in wild_picks:
                for j in range(n_jk + 1):
                    picked = naturals + wild + [Card.JOKER] * j
                    if picked and extend_meld(meld, picked, wild_rank, options) is not None:
                        found.append(Counter(picked))
        choices.append((t, found))
    plans: list[dict[int, list[Card]]] = []

    def combine(k: int, left: Counter[Card], plan: dict[int, list[Card]]) -> None:
        if k == len(choices):
            plans.append(plan)
            return
        t, found = choices[k]
        for pick in found:
            if all(left[c] >= n for c, n in pick.items()):
                nxt = {**plan, t: sorted(pick.elements())} if pick else plan
                combine(k + 1, left - pick, nxt)

    combine(0, hand, {})
    return plans
