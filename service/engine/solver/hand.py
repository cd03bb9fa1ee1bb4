"""Solving one hand without table runs: its costs and wilds prepared for the
search (:mod:`service.engine.solver.search`), the plan found turned into cards
(:mod:`service.engine.solver.plan`)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from service.engine.cards import JOKER_ID, Card, Rank
from service.engine.melds import split_wilds
from service.engine.options import Aces, Options
from service.engine.rules import points_table
from service.engine.solver.plan import Solved, TableInfo, assembled
from service.engine.solver.python_search import INF, pack
from service.engine.solver.search import solve_free, solve_free_each, solve_one, solve_one_each


def solve_hand(
    cards: Sequence[Card],
    wild_rank: Rank,
    options: Options,
    table: TableInfo | None,
    must_meld: bool = False,
) -> Solved | None:
    """(points, meld card groups, deadwood, lay-offs) for a hand without table runs.

    ``must_meld``: only arrangements without deadwood count (None if there is none).
    """
    nat, wr, jk = split_wilds(cards, wild_rank)
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
        jk_cost = wr_pts = INF
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
        res = solve_one(live, n_j, (wild_rank - 1) * 4, pts, leaf, high)
    else:
        pool = list(wr) + list(jk)
        costs = sorted(
            0 if free_wr and not must_meld else jk_cost if c.is_joker else wr_pts for c in pool
        )
        cheap = [0]
        for x in costs:
            cheap.append(min(INF, cheap[-1] + x))
        allwild_ok = options.all_wild_melds or bool(wr)
        live = [c.id for c in nat]
        if len(pool) < 2:
            live = _live(live, high, wild_rank)
        if must_meld and len(live) < len(nat):
            return None
        res = solve_free(live, len(pool), pts, cheap, allwild_ok, high)
    if res.value >= INF:
        assert must_meld
        return None
    return assembled(res, nat, wr, jk, wild_rank, options, table, one)


def _live(naturals: Sequence[int], high: bool, wild_rank: Rank) -> list[int]:
    """The natural cards (ids) that have a partner: another card of their
    rank, or of their suit one or two ranks away.  A meld with at most one wild
    needs two natural cards, so the others are deadwood whatever happens.
    Wild-rank cards are left out (the caller decides about them)."""
    x = pack(naturals)
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


def going_out_plans(
    cards: Sequence[Card], wild_rank: Rank, options: Options, candidates: Sequence[int]
) -> list[tuple[int, Solved]]:
    """The ``candidates`` (ids of cards among ``cards``) without which every other
    card can be melded, in order, each with how: what ``solve_hand(cards less
    that card, ..., must_meld=True)`` answers.  The natural candidates take one
    search call, whose searches share their memo and so find the very plans
    that a search each would; a wild candidate (fewer wilds left) is solved on
    its own.

    >>> from service.engine.cards import parse_cards
    >>> from service.engine.options import Options
    >>> hand = parse_cards("4H 5H 6H 7H 9C 9D 9S")
    >>> for i, solved in going_out_plans(hand, Rank.KING, Options(), [c.id for c in hand]):
    ...     print(Card.from_id(i), [" ".join(str(c) for c in g) for g in solved[1]])
    4H ['5H 6H 7H', '9C 9D 9S']
    7H ['4H 5H 6H', '9C 9D 9S']
    """
    # in id order, as the memos key a hand, so that wilds come in the same order
    cards = sorted(cards, key=attrgetter("id"))
    ids = [c.id for c in cards]
    nat, wr, jk = split_wilds(cards, wild_rank)
    nat_ids = [c.id for c in nat]
    wr_ids = [c.id for c in wr]
    wr_lo = (wild_rank - 1) * 4
    drops = sorted({c for c in candidates if c != JOKER_ID and not wr_lo <= c < wr_lo + 4})
    high = options.aces is Aces.HIGH_OR_LOW
    one = options.max_wilds_per_meld is not None
    inf = INF
    if not drops:
        found = []
    elif one:  # the costs of solve_hand's must_meld, without a table
        leaf = (len(jk), inf, 0, inf)
        found = solve_one_each(nat_ids + wr_ids, len(jk), wr_lo, _ALL_INF, leaf, high, drops)
    else:
        n_pool = len(wr) + len(jk)
        allwild_ok = options.all_wild_melds or bool(wr)
        cheap = [0] + [inf] * n_pool
        found = solve_free_each(nat_ids, n_pool, _ALL_INF, cheap, allwild_ok, high, drops)
    solved: dict[int, Solved] = {}
    for d, res in zip(drops, found, strict=True):
        if res.value < inf:
            at = nat_ids.index(d)
            rest = nat[:at] + nat[at + 1 :]
            solved[d] = assembled(res, rest, wr, jk, wild_rank, options, None, one)
    out = []
    for c in candidates:
        if c in solved:
            out.append((c, solved[c]))
        elif c == JOKER_ID or wr_lo <= c < wr_lo + 4:
            at = ids.index(c)
            rest = cards[:at] + cards[at + 1 :]
            alone = solve_hand(rest, wild_rank, options, None, must_meld=True)
            if alone is not None:
                out.append((c, alone))
    return out


_ALL_INF = (INF,) * 53
"""Every card's cost when all must be melded."""


_NEAR = [[q for q in (r - 2, r - 1, r + 1, r + 2) if 0 <= q < 13] for r in range(13)]
_NEAR_HIGH = [n + {0: [12, 11], 11: [0], 12: [0]}.get(r, []) for r, n in enumerate(_NEAR)]
