"""The hand solver: the arrangement of a hand that leaves the fewest penalty points.

The search itself lives in :mod:`service.engine._solver_core`, the preparation
of a hand and the turning of the optimal plan back into cards in
:mod:`service.engine._solver_plan`; this module is the public API, memoized,
and handles melds lying on the table (``lay_off``).  In mode free without
table melds (a draw's view and going-out checks, most of all) the C extension,
when built, does all of that but the melds' classification
(:class:`~service.engine._solver_plan._Free`), card for card as the Python does.

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

from service.engine._solver_plan import (
    _finish,
    _going_out_discards,
    _melds,
    _native_free,
    _solve_hand,
    _Table,
)
from service.engine.cards import JOKER, Card, Rank
from service.engine.melds import (
    Arrangement,
    Meld,
    MeldKind,
    extend_meld,
)
from service.engine.rules import Options


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
    >>> from service.engine.melds import classify_meld
    >>> run = classify_meld(parse_cards("4H 5H 6H"), Rank.SEVEN, Options())
    >>> a = best_arrangement(parse_cards("3H 9C"), Rank.SEVEN, Options(), [run])
    >>> a.layoffs, a.points
    ((LayOff(target=0, cards=(Card.parse('3H'),)),), 9)
    """
    return _best_cached(_key(cards), wild_rank, options, tuple(table))


def clear_memos() -> None:
    """Forget every memoized hand (for benchmarks that time cold solves)."""
    _best_cached.cache_clear()
    _going_out_cached.cache_clear()


def _key(cards: Sequence[Card]) -> tuple[int, ...]:
    """A hand as the memos key it: its card ids, sorted (ints sort and hash in C)."""
    return tuple(sorted([c.id for c in cards]))


@lru_cache(maxsize=8192)
def _best_cached(
    ids: tuple[int, ...], wild_rank: Rank, options: Options, table: tuple[Meld, ...]
) -> Arrangement:
    """Memo of the pure solver (a view and its legal moves ask for the same hand)."""
    if not table:
        free = _native_free(wild_rank, options, len(ids))
        if free is not None:  # the common case: all of it in C
            return free.arrangement(ids)
    cards = tuple(map(Card.from_id, ids))
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
    return _going_out_cached(_key(cards), wild_rank, options)


def going_out_discards(
    cards: Sequence[Card], wild_rank: Rank, options: Options, candidates: Sequence[Card]
) -> list[tuple[Card, tuple[Meld, ...]]]:
    """The cards of ``candidates`` (cards of ``cards``) whose discard leaves cards
    that all meld, in order, each with those melds: what :func:`going_out_melds`
    answers for ``cards`` less that card, found in one search rather than one each.

    >>> from service.engine.cards import parse_cards
    >>> from service.engine.rules import Options
    >>> hand = parse_cards("4H 5H 6H 7H 9C 9D 9S")
    >>> [(str(c), [str(m) for m in melds])
    ...  for c, melds in going_out_discards(hand, Rank.KING, Options(), hand)]
    [('4H', ['[5H 6H 7H]', '[9C 9D 9S]']), ('7H', ['[4H 5H 6H]', '[9C 9D 9S]'])]
    """
    free = _native_free(wild_rank, options, len(cards))
    if free is not None:  # the common case: all of it in C
        return free.going_out([c.id for c in cards], candidates)
    found = _going_out_discards(cards, wild_rank, options, [c.id for c in candidates])
    return [(Card.from_id(i), _melds(solved[1], wild_rank, options)) for i, solved in found]


@lru_cache(maxsize=8192)
def _going_out_cached(
    ids: tuple[int, ...], wild_rank: Rank, options: Options
) -> tuple[Meld, ...] | None:
    if not ids:
        return ()
    free = _native_free(wild_rank, options, len(ids))
    if free is not None:
        return free.melded(ids)
    cards = tuple(map(Card.from_id, ids))
    solved = _solve_hand(cards, wild_rank, options, None, must_meld=True)
    if solved is None:
        return None
    return _melds(solved[1], wild_rank, options)


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
