"""The hand solver: the arrangement of a hand that leaves the fewest penalty points.

This module is the public API, memoized.  A hand alone is prepared for the
search in :mod:`service.engine.solver.hand`, searched in
:mod:`service.engine.solver.search` (in C where
:mod:`service.engine.solver.switch` says so, else in
:mod:`service.engine.solver.python_search`) and its plan turned back into cards
in :mod:`service.engine.solver.plan`.  Melds lying on the table (``lay_off``)
go to the bounded lay-off search of :mod:`service.engine.solver.table`.

>>> from service.engine.cards import parse_cards
>>> from service.engine.options import Options
>>> a = best_arrangement(parse_cards("2C 2D 8S 9S JH QH KH"), Rank.SEVEN, Options())
>>> [str(m) for m in a.melds], a.points
(['[JH QH KH]'], 21)
"""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.byte_cache import LRUMemo
from service.engine.cards import Card, Rank
from service.engine.melds import Arrangement, Meld
from service.engine.options import Options
from service.engine.solver.hand import going_out_plans, solve_hand
from service.engine.solver.plan import finish, melds_of
from service.engine.solver.table import best_with_table
from service.engine.solver.work_budget import WORK_BUDGET, Budget

ARRANGEMENTS = LRUMemo("solver.arrangements", 0.15)
"""Memo of :func:`best_arrangement` (a view and its legal moves ask for the same
hand; the bots' exact evaluations under a wild limit ask again and again)."""
GOING_OUT = LRUMemo("solver.going_out", 0.05)
"""Memo of :func:`going_out_melds`."""


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
    >>> from service.engine.options import Options
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
    ARRANGEMENTS.clear()
    GOING_OUT.clear()


def arrangements_asked() -> int:
    """How many arrangements were asked of :func:`best_arrangement`'s memo so far,
    found there or not (counted by the memo)."""
    return ARRANGEMENTS.hits + ARRANGEMENTS.misses


def _key(cards: Sequence[Card]) -> tuple[int, ...]:
    """A hand as the memos key it: its card ids, sorted (ints sort and hash in C)."""
    return tuple(sorted([c.id for c in cards]))


@ARRANGEMENTS.memoize
def _best_cached(
    ids: tuple[int, ...], wild_rank: Rank, options: Options, table: tuple[Meld, ...]
) -> Arrangement:
    """Memo of the pure solver (a view and its legal moves ask for the same hand)."""
    cards = tuple(map(Card.from_id, ids))
    if not table:
        solved = solve_hand(cards, wild_rank, options, None)
        assert solved is not None
        return finish(*solved, wild_rank, options)
    return best_with_table(list(cards), wild_rank, options, table, Budget(None))


def bounded_arrangement(
    cards: Sequence[Card],
    wild_rank: Rank,
    options: Options,
    table: Sequence[Meld],
    units: int = WORK_BUDGET,
) -> Arrangement:
    """:func:`best_arrangement` for input from outside a game: with a table, the
    lay-off search stops past ``units`` work units with
    :class:`~service.engine.errors.SearchTooLargeError` (a game's own calls
    have no budget: a game must always score its hands)."""
    if not table:
        return best_arrangement(cards, wild_rank, options)
    hand = [Card.from_id(i) for i in _key(cards)]
    return best_with_table(hand, wild_rank, options, table, Budget(units))


def going_out_melds(
    cards: Sequence[Card], wild_rank: Rank, options: Options
) -> tuple[Meld, ...] | None:
    """Melds using every card of ``cards``, or None when there are none.

    >>> from service.engine.cards import parse_cards
    >>> from service.engine.options import Options
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
    >>> from service.engine.options import Options
    >>> hand = parse_cards("4H 5H 6H 7H 9C 9D 9S")
    >>> [(str(c), [str(m) for m in melds])
    ...  for c, melds in going_out_discards(hand, Rank.KING, Options(), hand)]
    [('4H', ['[5H 6H 7H]', '[9C 9D 9S]']), ('7H', ['[4H 5H 6H]', '[9C 9D 9S]'])]
    """
    found = going_out_plans(cards, wild_rank, options, [c.id for c in candidates])
    return [(Card.from_id(i), melds_of(solved[1], wild_rank, options)) for i, solved in found]


@GOING_OUT.memoize
def _going_out_cached(
    ids: tuple[int, ...], wild_rank: Rank, options: Options
) -> tuple[Meld, ...] | None:
    if not ids:
        return ()
    cards = tuple(map(Card.from_id, ids))
    solved = solve_hand(cards, wild_rank, options, None, must_meld=True)
    if solved is None:
        return None
    return melds_of(solved[1], wild_rank, options)
