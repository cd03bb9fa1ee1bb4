"""The lay-off search as it was before it was bounded (commit f0094a1): every
combination of lay-offs onto the table runs, times every rank for each all-wild
table set, each solved.  Exponential in table runs x jokers, it is kept here
only as the reference that the bounded search in
:mod:`service.engine.solver.table` must match arrangement for arrangement on
small tables."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations, product

from service.engine import (
    JOKER,
    Arrangement,
    Card,
    Meld,
    MeldKind,
    Options,
    Rank,
    extend_meld,
    solver,
)
from service.engine.solver.hand import solve_hand
from service.engine.solver.plan import TableInfo, finish


def legacy_best_arrangement(
    cards: Sequence[Card], wild_rank: Rank, options: Options, table: Sequence[Meld]
) -> Arrangement:
    """What ``best_arrangement`` answered before: with no table the very same."""
    if not table:
        return solver.best_arrangement(cards, wild_rank, options)
    return _best_with_table(sorted(cards, key=lambda c: c.id), wild_rank, options, table)


def _best_with_table(
    cards: list[Card], wild_rank: Rank, options: Options, table: Sequence[Meld]
) -> Arrangement:
    info = TableInfo(table, wild_rank, options)
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
        solved = solve_hand(rest, wild_rank, options, info)
        assert solved is not None
        points, groups, deadwood, layoffs = solved
        if best is not None and points >= best[0]:
            continue
        for t, cs in plan.items():
            layoffs.setdefault(t, [])[:0] = cs
        for t, cs in layoffs.items():
            assert extend_meld(table[t], cs, wild_rank, options) is not None
        best = (points, finish(points, groups, deadwood, layoffs, wild_rank, options))
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
        n_jk = hand[JOKER]
        room = 13 - len(meld.cards)
        pool = [c for c in wrs for _ in range(hand[c])]
        wild_picks: list[list[Card]]
        if one:  # one wild-rank card as itself, one as the wild: at most two
            wild_picks = [[]] + [[c] for c in wrs]
            wild_picks += [list(p) for p in sorted(set(combinations(pool, 2)))]
        else:
            wild_picks = [pool[:k] for k in range(min(len(pool), room) + 1)]
        stand_in = [JOKER] * (n_jk + len(pool))
        for counts in product(*((0, 1) for _ in nat)):
            naturals = [c for c, k in zip(nat, counts, strict=True) if k]
            # jokers are the most welcome cards: if these naturals do not
            # fit even with every wild standing in as a joker, skip them
            if naturals and extend_meld(meld, naturals + stand_in, wild_rank, options) is None:
                continue
            for wild in wild_picks:
                for j in range(n_jk + 1):
                    picked = naturals + wild + [JOKER] * j
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
