"""The bounded lay-off search: the very arrangement of the plain search it
replaced (harness/legacy_layoffs.py) on adversarial-but-legal small
tables -- many runs, jokers, wild-rank cards, all-wild sets -- the points of the
brute-force reference, and a prompt, bounded answer on the tables that made
the plain search run for minutes."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.legacy_layoffs import legacy_best_arrangement
from service.engine import (
    JOKER,
    Aces,
    Card,
    Meld,
    MeldKind,
    Options,
    Rank,
    SearchTooLargeError,
    best_arrangement,
    bounded_arrangement,
    build_shoe,
    classify_meld,
    extend_meld,
    parse_cards,
)
from service.engine.solver.table import best_with_table
from service.engine.solver.work_budget import WORK_BUDGET, Budget
from tests.engine.reference import ref_best_points
from tests.engine.test_solver import check_arrangement

OPTION_SETS = [
    Options(
        aces=aces,
        jokers_per_deck=2,
        max_wilds_per_meld=mw,
        all_wild_melds=aw,
        unused_wild_points=uwp,
        lay_off=True,
    )
    for aces in Aces
    for mw in (None, 1)
    for aw in (False, True)
    for uwp in (None, 15)
]


def _table(rng: random.Random, shoe: list[Card], wild: Rank, opts: Options, n: int) -> list[Meld]:
    """``n`` table melds: runs mostly (some of them equal), a few sets, some
    all wild, some holding laid-off jokers."""
    table: list[Meld] = []
    suited = [c for c in shoe if not c.is_joker and c.rank != wild]
    wilds = [c for c in shoe if c.is_joker or c.rank == wild]
    while len(table) < n:
        roll = rng.random()
        if table and roll < 0.15:
            table.append(rng.choice(table))  # an identical meld
            continue
        if roll < 0.3:
            cards = rng.sample(wilds, 3)  # all wild: a flex set (or nothing)
        elif roll < 0.45:
            c = rng.choice(suited)
            cards = [c, c, rng.choice(wilds)]
        else:
            c = rng.choice(suited)
            length = rng.randint(3, 5)
            lo = min(c.id >> 2, 13 - length)
            cards = [Card.from_id(((lo + k) << 2) | (c.id & 3)) for k in range(length)]
            if rng.random() < 0.4:
                cards[rng.randrange(len(cards))] = rng.choice(wilds)
        meld = classify_meld(cards, wild, opts)
        if meld is None:
            continue
        if rng.random() < 0.2:
            meld = extend_meld(meld, [JOKER], wild, opts) or meld
        table.append(meld)
    return table


Case = tuple[list[Card], Rank, Options, list[Meld]]


def _cases(seed: int, n: int, hand: tuple[int, int], melds: tuple[int, int]) -> Iterator[Case]:
    rng = random.Random(seed)
    for k in range(n):
        opts = OPTION_SETS[k % len(OPTION_SETS)]
        wild = Rank(rng.randint(1, 13))
        lo = rng.randint(0, 9)  # a few ranks, so that cards fit the runs often
        shoe = [
            c
            for c in build_shoe(3, 2)
            if c.is_joker or c.rank == wild or lo <= c.id >> 2 <= lo + 4 or c.id >> 2 == 0
        ]
        table = _table(rng, shoe, wild, opts, rng.randint(*melds))
        extra = [JOKER] * rng.randint(0, 3)
        yield rng.sample(shoe, rng.randint(*hand)) + extra, wild, opts, table


@pytest.mark.parametrize("seed", range(4))
def test_same_arrangement_as_the_plain_search(seed: int) -> None:
    for cards, wild, opts, table in _cases(500 + seed, 150, (1, 6), (1, 5)):
        new = best_arrangement(cards, wild, opts, table)
        assert new == legacy_best_arrangement(cards, wild, opts, table), (cards, table, wild)
        check_arrangement(new, cards, wild, opts, table)


def test_points_of_the_reference() -> None:
    for cards, wild, opts, table in _cases(900, 120, (1, 5), (1, 2)):
        a = best_arrangement(cards, wild, opts, table)
        assert a.points == ref_best_points(cards, wild, opts, table), (cards, table, wild)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    jokers=st.integers(0, 5),
    runs=st.integers(1, 6),
    options=st.sampled_from(OPTION_SETS),
)
def test_jokers_over_many_runs_as_the_plain_search(
    seed: int, jokers: int, runs: int, options: Options
) -> None:
    """The shape of the denial of service, small: jokers and a few naturals of
    one suit against several runs of that suit."""
    rng = random.Random(seed)
    wild = Rank(rng.randint(1, 13))
    suit = rng.randrange(4)
    ranks = [r for r in range(13) if r != wild - 1]
    table = []
    for _ in range(runs):
        start = rng.randrange(len(ranks) - 3)
        cards = [Card.from_id((r << 2) | suit) for r in ranks[start : start + 3]]
        meld = classify_meld(cards, wild, options)
        if meld is not None and meld.kind is MeldKind.RUN:
            table.append(meld)
    naturals = [Card.from_id((r << 2) | suit) for r in rng.sample(ranks, rng.randint(0, 3))]
    wilds = [Card.from_id(((wild - 1) << 2) | rng.randrange(4)) for _ in range(rng.randint(0, 2))]
    cards = naturals + wilds + [JOKER] * jokers
    if not table or not cards:
        return
    new = best_arrangement(cards, wild, options, table)
    assert new == legacy_best_arrangement(cards, wild, options, table)


ISSUE_OPTIONS = Options(jokers_per_deck=2, lay_off=True, all_wild_melds=True)


def _full_runs(n: int) -> list[Meld]:
    runs = []
    for k in range(n):
        cards = [Card.from_id((r << 2) | (k & 3)) for r in range(13)]
        meld = classify_meld(cards, Rank.SEVEN, ISSUE_OPTIONS)
        assert meld is not None
        runs.append(meld)
    return runs


@pytest.mark.parametrize(("jokers", "runs"), [(16, 8), (8, 16), (16, 32)])
def test_the_issues_tables_are_answered(jokers: int, runs: int) -> None:
    """16 jokers on 8 runs took 6.4 s, 8 on 16 took 17.6 s, 16 on 32 never
    ended: now each is one count of jokers laid off, all of them onto the
    last run (the plain search's first plan of the most cards: each run's
    first pick is none), as the plain search answers on a small one."""
    cards = [JOKER] * jokers
    table = _full_runs(runs)
    budget = Budget()
    a = best_with_table(cards, Rank.SEVEN, ISSUE_OPTIONS, table, budget)
    assert a.points == 0 and a.melds == () and a.deadwood == ()
    assert [(lo.target, len(lo.cards)) for lo in a.layoffs] == [(runs - 1, jokers)]
    assert 0 < budget.used < WORK_BUDGET
    small = legacy_best_arrangement([JOKER] * 3, Rank.SEVEN, ISSUE_OPTIONS, table[:3])
    assert [(lo.target, len(lo.cards)) for lo in small.layoffs] == [(2, 3)]


def test_over_the_budget_it_stops_with_an_error() -> None:
    table = _full_runs(32)
    hand = parse_cards("JK " * 8 + "7C 7D 7H 7S 7C 7D 7H 7S")
    with pytest.raises(SearchTooLargeError) as err:
        best_with_table(hand, Rank.SEVEN, ISSUE_OPTIONS, table, Budget(100))
    assert err.value.code == "SEARCH_TOO_LARGE"
    with pytest.raises(SearchTooLargeError):
        bounded_arrangement(hand, Rank.SEVEN, ISSUE_OPTIONS, table, units=100)
    # a game's own calls have no budget, and the bounded one agrees within it
    a = best_arrangement(hand, Rank.SEVEN, ISSUE_OPTIONS, table)
    assert a == bounded_arrangement(hand, Rank.SEVEN, ISSUE_OPTIONS, table)
    unlimited = Budget(None)
    assert best_with_table(hand, Rank.SEVEN, ISSUE_OPTIONS, table, unlimited) == a
    assert unlimited.used > 100


def test_lays_off_the_hand_counted_once_per_card() -> None:
    """Identical runs pick alike, and a hand never lays off more copies than it holds."""
    opts = Options(jokers_per_deck=2, lay_off=True)
    run = classify_meld(parse_cards("4H 5H 6H"), Rank.KING, opts)
    assert run is not None
    cards = parse_cards("3H 7H 7H JK")
    a = best_arrangement(cards, Rank.KING, opts, [run, run, run])
    check_arrangement(a, cards, Rank.KING, opts, [run, run, run])
    laid = Counter(c for lo in a.layoffs for c in lo.cards)
    assert laid == Counter(cards) and a.points == 0
