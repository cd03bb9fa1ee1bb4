"""The hand solver's searches: in C when :mod:`service.engine.solver.switch` says
so, else in Python (:mod:`service.engine.solver.python_search`), the same plan either
way (a whole solve of a hand is about four times faster in C).

:func:`solve_free` and :func:`solve_one` search one multiset of card ids;
:func:`solve_free_each` and :func:`solve_one_each` several at once (one card
less each), whose searches share their memo in C.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.solver.python_search import (
    LeafCosts,
    Result,
    Step,
    pack,
    search_free,
    search_one,
)
from service.engine.solver.switch import c_search


def solve_free(
    ids: Sequence[int],
    wilds: int,
    pts: Sequence[int],
    cheap: Sequence[int],
    allwild_ok: bool,
    high: bool,
) -> Result:
    """Mode free, over the natural cards ``ids`` and ``wilds`` wilds.
    ``pts[id]``: a natural card's cost in deadwood; ``cheap[d]``: cost of the
    ``d`` cheapest wilds left in deadwood.

    AC 2C 3C and 6C (ids 0, 4, 8, 20), one wild, every card costing 1: the
    run, 6C left in deadwood, the wild left over for a meld with room (cap):

    >>> res = solve_free([0, 4, 8, 20], 1, [1] * 53, [0, 10], False, False)
    >>> res.value, res.melds, res.leftover, res.cap
    (1, [((0, 4, 8), 0, 'run')], 1, 1)
    """
    native = c_search(max(len(ids), wilds))
    if native is not None:
        return _result(native.solve_free(ids, wilds, pts, cheap, allwild_ok, high))
    return search_free(pack(ids), wilds, pts, cheap, allwild_ok, high)


def solve_one(
    ids: Sequence[int], jokers: int, wr_base: int, pts: Sequence[int], leaf: LeafCosts, high: bool
) -> Result:
    """Mode one, over the natural cards ``ids`` (wild-rank cards included) and
    ``jokers``; ``wr_base``: the id of the wild rank's first card."""
    native = c_search(max(len(ids), jokers))
    if native is not None:
        return _result(native.solve_one(ids, jokers, wr_base, pts, leaf, high), wr_base << 2)
    return search_one(pack(ids), jokers, wr_base, pts, leaf, high)


def solve_free_each(
    ids: Sequence[int],
    wilds: int,
    pts: Sequence[int],
    cheap: Sequence[int],
    allwild_ok: bool,
    high: bool,
    drops: Sequence[int],
) -> list[Result]:
    """``solve_free(ids less one copy of d, ...)`` for each ``d`` of ``drops`` (ids
    among ``ids``): in C, one call whose searches share their memo.

    >>> found = solve_free_each([0, 4, 8, 12], 0, [1] * 53, [0], False, False, [0, 4])
    >>> [res.value for res in found]
    [0, 3]
    """
    native = c_search(max(len(ids), wilds))
    if native is not None:
        found = native.solve_free_each(ids, wilds, pts, cheap, allwild_ok, high, drops)
        return [_result(one) for one in found]
    return [
        search_free(pack(ids) - (1 << (d << 2)), wilds, pts, cheap, allwild_ok, high)
        for d in _checked_drops(ids, drops, None)
    ]


def solve_one_each(
    ids: Sequence[int],
    jokers: int,
    wr_base: int,
    pts: Sequence[int],
    leaf: LeafCosts,
    high: bool,
    drops: Sequence[int],
) -> list[Result]:
    """``solve_one(ids less one copy of d, ...)`` for each ``d`` of ``drops`` (ids
    among ``ids``, not of the wild rank: dropping one would change how many
    wilds the search may designate)."""
    native = c_search(max(len(ids), jokers))
    if native is not None:
        found = native.solve_one_each(ids, jokers, wr_base, pts, leaf, high, drops)
        return [_result(one, wr_base << 2) for one in found]
    return [
        search_one(pack(ids) - (1 << (d << 2)), jokers, wr_base, pts, leaf, high)
        for d in _checked_drops(ids, drops, wr_base)
    ]


def _checked_drops(ids: Sequence[int], drops: Sequence[int], wr_base: int | None) -> list[int]:
    """``drops``, refused as the C refuses them."""
    for d in drops:
        if d not in ids or (wr_base is not None and wr_base <= d < wr_base + 4):
            raise ValueError("a drop must be one of the ids, not of the wild rank")
    return list(drops)


def _result(found: tuple[int, list[Step], int, int], wr_shift: int = 0) -> Result:
    """A :class:`Result` from the C search's (value, steps, leftover, cap); mode one
    passes the shift of its wild rank's field (``wr_base << 2``)."""
    res = Result()
    res.wr_shift = wr_shift
    res.value, steps, res.leftover, res.cap = found
    for step in steps:
        if step[2] == "designate":
            res.designated.append(step[0][0])
        else:
            res.melds.append(step)
    return res
