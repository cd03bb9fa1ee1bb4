"""The C search (service/engine/solver/_native.c) against the Python one.

The C is a port of ``python_search``'s search, state for state; the solver
uses it when it is built (``switch`` decides).  These tests hold it to
giving the same Result -- value, melds in the same order, designated cards,
leftover wilds and room -- for any input, so the Python search stays the
reference and the fallback.  The rest of the solver's tests (worked examples,
brute-force reference, properties) run on whichever search is in use: the C
one wherever it could be built.  Whole hands solved with the C search are held
to the Python's in test_solver_native_hands.py.
"""

from __future__ import annotations

import random
import shutil
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine import Aces, Card, FaceCardPoints, Options, Rank, build_shoe, card_points
from service.engine.solver import best_arrangement, clear_memos, search, switch
from service.engine.solver.python_search import INF, Result
from tests.engine.native_build import native, needs_native


def _can_build() -> bool:
    include = sysconfig.get_paths().get("include")
    return shutil.which("cc") is not None and bool(include) and Path(include, "Python.h").exists()


@pytest.mark.skipif(not _can_build(), reason="no C compiler or Python headers here")
def test_the_extension_is_built_where_it_can_be() -> None:
    """`make install` builds it; a silent fall back to Python would cost every draw."""
    assert native is not None


def both(name: str, *args: object) -> tuple[Any, Any]:
    """What ``name`` (a function of ``search``: "solve_free", "solve_one_each"...)
    answers in C and in Python."""
    fn = getattr(search, name)
    with pytest.MonkeyPatch.context() as mp:
        c = fn(*args)
        mp.setattr(switch, "EXTENSION", None)
        py = fn(*args)
    return c, py


def fields(res: Result) -> tuple[object, ...]:
    return (res.value, res.melds, res.designated, res.leftover, res.cap, res.wr_shift)


costs = st.lists(st.sampled_from([0, 1, 2, 5, 10, 15, INF]), min_size=53, max_size=53)
two_decks = st.lists(st.integers(0, 51), max_size=16).filter(
    lambda ids: all(ids.count(i) <= 2 for i in ids)
)


@needs_native
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ids=two_decks,
    wilds=st.integers(0, 8),
    pts=costs,
    wild_costs=st.lists(st.sampled_from([0, 15, 20, 50, INF]), min_size=8, max_size=8),
    allwild_ok=st.booleans(),
    high=st.booleans(),
)
def test_free_mode_agrees(
    ids: list[int],
    wilds: int,
    pts: list[int],
    wild_costs: list[int],
    allwild_ok: bool,
    high: bool,
) -> None:
    cheap = [0]
    for x in sorted(wild_costs[:wilds]):
        cheap.append(min(INF, cheap[-1] + x))
    c, py = both("solve_free", ids, wilds, pts, cheap, allwild_ok, high)
    assert fields(c) == fields(py)


@needs_native
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ids=two_decks,
    jokers=st.integers(0, 4),
    wild_rank=st.integers(0, 12),
    pts=costs,
    leaf=st.tuples(
        st.integers(0, 4),
        st.sampled_from([0, 20, INF]),
        st.integers(0, 3),
        st.sampled_from([0, 7, 15, INF]),
    ),
    high=st.booleans(),
)
def test_one_mode_agrees(
    ids: list[int],
    jokers: int,
    wild_rank: int,
    pts: list[int],
    leaf: tuple[int, int, int, int],
    high: bool,
) -> None:
    c, py = both("solve_one", ids, jokers, wild_rank * 4, pts, leaf, high)
    assert fields(c) == fields(py)


OPTION_SETS = [
    Options(aces=aces, face_card_points=face, jokers_per_deck=2, max_wilds_per_meld=mw)
    for aces in Aces
    for face in FaceCardPoints
    for mw in (None, 1)
]


def dealt_hands(count: int) -> Iterator[tuple[list[Card], Rank, Options]]:
    rng = random.Random(13)
    shoe = build_shoe(2, 2)
    for k in range(count):
        yield rng.sample(shoe, rng.randint(3, 16)), Rank(rng.randint(1, 13)), OPTION_SETS[k % 8]


@needs_native
def test_dealt_hands_arrange_the_same() -> None:
    """Whole arrangements of dealt hands, C and Python searches behind them."""
    for cards, wild, opts in dealt_hands(1500):
        clear_memos()
        a = best_arrangement(cards, wild, opts)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(switch, "EXTENSION", None)
            clear_memos()
            b = best_arrangement(cards, wild, opts)
        assert a == b
        assert a.points == sum(card_points(c, wild, opts) for c in a.deadwood)
    clear_memos()


PTS = [0] * 53


@needs_native
@pytest.mark.parametrize(
    "args",
    [
        ([52], 0, PTS, [0], False, False),  # a joker is a wild, never a natural id
        ([-1], 0, PTS, [0], False, False),
        ([0], 2, PTS, [0], False, False),  # cheap shorter than wilds + 1
        (["2C"], 0, PTS, [0], False, False),
        ([0] * 16, 0, PTS, [0], False, False),  # more copies than a nibble counts
        (list(range(33)), 0, PTS, [0], False, False),  # more cards than MAX_CARDS
        ([0], 0, [0] * 20, [0], False, False),  # a cost for every natural id
        ([0], 0, [-5] * 53, [0], False, False),  # costs are 0..INF
        ([0], 1, PTS, [0, INF + 1], False, False),
    ],
)
def test_bad_input_is_refused_free(args: tuple[object, ...]) -> None:
    assert native is not None
    with pytest.raises((ValueError, TypeError)):
        native.solve_free(*args)


@needs_native
@pytest.mark.parametrize(
    "args",
    [
        ([0], 0, 2, PTS, (0, 0, 0, 0), False),  # the wild rank's first id is a multiple of 4
        ([0], 0, 52, PTS, (0, 0, 0, 0), False),
        ([0], -1, 0, PTS, (0, 0, 0, 0), False),
        ([0], 0, 0, PTS, (0, 2**62, 0, 0), False),  # leaf costs are 0..INF
        ([0], 0, 0, PTS, (0, 0, -1, 0), False),
        ([0], 0, 0, PTS, (0, 0, 0), False),
        ([0], 0, 0, [1] * 53, "leaf", False),
    ],
)
def test_bad_input_is_refused_one(args: tuple[object, ...]) -> None:
    assert native is not None
    with pytest.raises((ValueError, TypeError)):
        native.solve_one(*args)


def test_inputs_over_the_c_limit_go_to_the_python() -> None:
    """Three decks' worth of clubs, 39 cards: the search in Python answers."""
    ids = [i for i in range(52) if i & 3 == 0] * 3
    assert native is None or len(ids) > native.MAX_CARDS
    res = search.solve_free(ids, 0, [1] * 53, [0], False, False)
    assert res.value == 0 and sorted(i for meld in res.melds for i in meld[0]) == sorted(ids)


@needs_native
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ids=two_decks.filter(bool),
    wilds=st.integers(0, 4),
    pts=costs,
    allwild_ok=st.booleans(),
    high=st.booleans(),
    data=st.data(),
)
def test_free_each_agrees_with_one_search_per_drop(
    ids: list[int], wilds: int, pts: list[int], allwild_ok: bool, high: bool, data: st.DataObject
) -> None:
    """One memo for every drop finds each search's own plan, in C and in Python."""
    drops = data.draw(st.lists(st.sampled_from(ids), max_size=8))
    cheap = [0] + [INF] * wilds
    c, py = both("solve_free_each", ids, wilds, pts, cheap, allwild_ok, high, drops)
    alone = []
    for d in drops:
        rest = list(ids)
        rest.remove(d)
        alone.append(search.solve_free(rest, wilds, pts, cheap, allwild_ok, high))
    assert [fields(r) for r in c] == [fields(r) for r in py] == [fields(r) for r in alone]


@needs_native
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ids=two_decks.filter(bool),
    jokers=st.integers(0, 3),
    wild_rank=st.integers(0, 12),
    pts=costs,
    high=st.booleans(),
    data=st.data(),
)
def test_one_each_agrees_with_one_search_per_drop(
    ids: list[int], jokers: int, wild_rank: int, pts: list[int], high: bool, data: st.DataObject
) -> None:
    naturals = [i for i in ids if i >> 2 != wild_rank]
    drops = data.draw(st.lists(st.sampled_from(naturals), max_size=8)) if naturals else []
    leaf = (jokers, INF, 0, INF)
    c, py = both("solve_one_each", ids, jokers, wild_rank * 4, pts, leaf, high, drops)
    alone = []
    for d in drops:
        rest = list(ids)
        rest.remove(d)
        alone.append(search.solve_one(rest, jokers, wild_rank * 4, pts, leaf, high))
    assert [fields(r) for r in c] == [fields(r) for r in py] == [fields(r) for r in alone]


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("solve_free_each", ([0, 4], 0, PTS, [0], False, False, [8])),  # not among the ids
        ("solve_free_each", ([0, 4], 0, PTS, [0], False, False, [52])),  # a joker is no natural id
        ("solve_one_each", ([0, 4, 8], 0, 4, PTS, (0, 0, 0, 0), False, [4])),  # of the wild rank
    ],
)
def test_drops_must_be_natural_ids_of_the_hand(name: str, args: tuple[object, ...]) -> None:
    """Both searches refuse the same drops (the C would otherwise search a
    multiset with a count below zero, the Python an int gone negative)."""
    with pytest.raises(ValueError):
        getattr(search, name)(*args)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(switch, "EXTENSION", None)
        with pytest.raises(ValueError):
            getattr(search, name)(*args)
