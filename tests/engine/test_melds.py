"""classify_meld and extend_meld: unit cases per option, and agreement with the
brute-force reference on random card groups."""

from __future__ import annotations

import random

import pytest

from service.engine import (
    Aces,
    Meld,
    MeldKind,
    Options,
    Rank,
    build_shoe,
    classify_meld,
    extend_meld,
    parse_cards,
)
from tests.engine.reference import ref_extend_ok, ref_is_run, ref_is_set, ref_valid

DEFAULT = Options()
HIGH = Options(aces=Aces.HIGH_OR_LOW)
ONE = Options(max_wilds_per_meld=1)
ALLW = Options(all_wild_melds=True)
SEVEN = Rank.SEVEN


def meld(text: str, wild: Rank = SEVEN, options: Options = DEFAULT) -> Meld | None:
    return classify_meld(parse_cards(text), wild, options)


def shown(text: str, wild: Rank = SEVEN, options: Options = DEFAULT) -> str | None:
    m = meld(text, wild, options)
    return None if m is None else f"{m.kind.value} {m}"


@pytest.mark.parametrize(
    ("text", "wild", "options", "expected"),
    [
        ("7H 7S 7C", SEVEN, DEFAULT, "set [7C 7H 7S]"),
        ("9C 9C 9D", SEVEN, DEFAULT, "set [9C 9C 9D]"),
        ("9C 9D", SEVEN, DEFAULT, None),
        ("9C 9D 8D", SEVEN, DEFAULT, None),
        ("AH 2H 3H", SEVEN, DEFAULT, "run [AH 2H 3H]"),
        ("3H AH 2H", SEVEN, HIGH, "run [AH 2H 3H]"),
        ("QH KH AH", SEVEN, DEFAULT, None),
        ("QH KH AH", SEVEN, HIGH, "run [QH KH AH]"),
        ("KH AH 2H", SEVEN, HIGH, None),
        ("KH AH 2H", SEVEN, DEFAULT, None),
        ("4S 5S 6S 7S", SEVEN, DEFAULT, "run [4S 5S 6S 7S]"),
        ("4S 5S 6D", SEVEN, DEFAULT, None),
        ("4S 4S 5S 6S", SEVEN, DEFAULT, None),
        # wilds
        ("6H 7C 8H", SEVEN, DEFAULT, "run [6H 7C 8H]"),
        ("4H 7C 6H", SEVEN, DEFAULT, "run [4H 7C 6H]"),
        ("4H 7C JK 8H", SEVEN, DEFAULT, None),
        ("4H 6H JK 7C", SEVEN, DEFAULT, "run [4H 7C 6H JK]"),
        ("5H 7C 7D", SEVEN, DEFAULT, "set [5H 7C 7D]"),
        ("JK JK JK", SEVEN, DEFAULT, None),
        ("JK JK JK", SEVEN, ALLW, "set [JK JK JK]"),
        ("3H 3S 3D", Rank.THREE, DEFAULT, "set [3D 3H 3S]"),
        ("7H JK JK", SEVEN, DEFAULT, "set [7H JK JK]"),
        ("7H JK JK", SEVEN, ONE, None),
        # max one wild per meld: a wild-rank card playing as itself is no wild
        ("6H 7H 8H", SEVEN, ONE, "run [6H 7H 8H]"),
        ("6H 7C 8H", SEVEN, ONE, "run [6H 7C 8H]"),
        ("6H 7C JK", SEVEN, ONE, None),
        ("5H 5D 7C", SEVEN, ONE, "set [5D 5H 7C]"),
        ("5H 7C 7D", SEVEN, ONE, None),
        ("7C 7D 7H JK", SEVEN, ONE, "set [7C 7D 7H JK]"),
        ("7C 7D JK", SEVEN, ONE, "set [7C 7D JK]"),
        ("JK JK JK", SEVEN, Options(all_wild_melds=True, max_wilds_per_meld=1), None),
        # 13-card limit
        ("AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH", SEVEN, DEFAULT, "run"),
        ("AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH JK", SEVEN, DEFAULT, None),
        ("2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH", SEVEN, HIGH, "run"),
        ("2H 3H 4H 5H 6H 8H 9H 10H JH QH KH AH JK", SEVEN, HIGH, "run"),
        # ace high never with ace low in one run
        ("AH 2H 3H KH QH", SEVEN, HIGH, None),
        ("AH KH JK", SEVEN, HIGH, "run [JK KH AH]"),
    ],
)
def test_classify(text: str, wild: Rank, options: Options, expected: str | None) -> None:
    got = shown(text, wild, options)
    if expected in ("run", "set"):
        assert got is not None and got.startswith(expected)
    else:
        assert got == expected


def test_prefers_set_and_orders_runs() -> None:
    m = meld("7C 7D 5H")
    assert m is not None and m.kind is MeldKind.SET
    m = meld("9H 7C 6H JK")  # 6 7 8 9 with 7C the 7 or 8
    assert m is not None and m.kind is MeldKind.RUN
    assert [c.code for c in m.cards][0] == "6H" and m.cards[-1].code in ("9H", "JK", "7C")


def test_extend() -> None:
    run = meld("4H 5H 6H")
    assert run is not None
    assert extend_meld(run, parse_cards("3H"), SEVEN, DEFAULT) is not None
    assert extend_meld(run, parse_cards("9H"), SEVEN, DEFAULT) is None
    assert extend_meld(run, parse_cards("9H 7C"), SEVEN, DEFAULT) is None  # 4..9 needs six cards
    assert extend_meld(run, parse_cards("9H 7C JK"), SEVEN, DEFAULT) is not None
    assert extend_meld(run, parse_cards("8H JK"), SEVEN, ONE) is not None
    assert extend_meld(run, [], SEVEN, DEFAULT) is None
    one = meld("4H 7C 6H", SEVEN, ONE)
    assert one is not None
    assert extend_meld(one, parse_cards("7D"), SEVEN, ONE) is None  # second wild
    got = extend_meld(one, parse_cards("JK"), SEVEN, ONE)  # a joker goes anywhere
    assert got is not None and len(got.cards) == 4
    full = meld("AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH")
    assert full is not None
    assert extend_meld(full, parse_cards("JK"), SEVEN, DEFAULT) is not None
    assert extend_meld(full, parse_cards("7C"), SEVEN, DEFAULT) is None
    s = meld("5H 5D 5S")
    assert s is not None
    assert extend_meld(s, parse_cards("5C 5C"), SEVEN, DEFAULT) is not None
    assert extend_meld(s, parse_cards("6H"), SEVEN, DEFAULT) is None
    assert extend_meld(s, parse_cards("7C 7D"), SEVEN, ONE) is None


def _random_groups(n: int, seed: int):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    for _ in range(n):
        opts = Options(
            aces=rng.choice(list(Aces)),
            jokers_per_deck=2,
            max_wilds_per_meld=rng.choice([None, 1]),
            all_wild_melds=rng.choice([False, True]),
        )
        wild = Rank(rng.randint(1, 13))
        lo = rng.randint(1, 11)
        shoe = [
            c
            for c in build_shoe(2, 2)
            if c.is_joker
            or c.rank == wild
            or lo <= (c.id >> 2) + 1 <= lo + 3
            or c.id >> 2 in (0, 12)
        ]
        if rng.random() < 0.5:  # mostly one suit, to get runs
            suit = rng.randrange(4)
            shoe = [c for c in shoe if c.is_joker or c.rank == wild or c.id & 3 == suit]
        yield rng, shoe, wild, opts


def test_classify_matches_reference() -> None:
    for rng, shoe, wild, opts in _random_groups(3000, 11):
        cards = rng.sample(shoe, rng.randint(2, 6))
        m = classify_meld(cards, wild, opts)
        assert (m is not None) == ref_valid(cards, wild, opts), (cards, wild, opts)
        if m is not None:
            assert sorted(m.cards) == sorted(cards)
            check = ref_is_set if m.kind is MeldKind.SET else ref_is_run
            assert check(list(m.cards), wild, opts)
            if m.kind is MeldKind.RUN:
                assert not ref_is_set(cards, wild, opts)  # a set is preferred


def test_classify_ignores_the_order_of_the_cards() -> None:
    # the solver memoizes the melds of its plans by their sorted cards
    for rng, shoe, wild, opts in _random_groups(3000, 13):
        cards = rng.sample(shoe, rng.randint(3, 7))
        m = classify_meld(cards, wild, opts)
        assert classify_meld(sorted(cards), wild, opts) == m, (cards, wild, opts)
        assert classify_meld(cards[::-1], wild, opts) == m, (cards, wild, opts)


def test_extend_matches_reference() -> None:
    for rng, shoe, wild, opts in _random_groups(2000, 12):
        base = classify_meld(rng.sample(shoe, rng.randint(3, 5)), wild, opts)
        if base is None:
            continue
        cards = rng.sample(shoe, rng.randint(1, 3))
        got = extend_meld(base, cards, wild, opts)
        assert (got is not None) == ref_extend_ok(base, cards, wild, opts), (base, cards)
        if got is not None:
            assert got.kind is base.kind
            assert sorted(got.cards) == sorted([*base.cards, *cards])
