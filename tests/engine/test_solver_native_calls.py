"""The C's whole-hand functions called directly: which rules and hands it takes (the
rest goes to the Python), what it refuses, and what it answers for each candidate."""

from __future__ import annotations

from array import array

import pytest

from service.engine import Card, Options, Rank, parse_cards, points_table
from service.engine.solver import going_out_discards, switch
from service.engine.solver.native import c_rules
from service.engine.solver.python_search import INF
from tests.engine.native_build import native, needs_native


def test_what_the_c_does_not_do_goes_to_the_python() -> None:
    """Mode one, more cards than the C takes, no extension: c_rules says no."""
    if native is not None:
        assert c_rules(Rank.SEVEN, Options(), native.MAX_CARDS) is not None
        assert c_rules(Rank.SEVEN, Options(), native.MAX_CARDS + 1) is None
    assert c_rules(Rank.SEVEN, Options(max_wilds_per_meld=1), 14) is None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(switch, "EXTENSION", None)
        assert c_rules(Rank.SEVEN, Options(), 14) is None


def test_the_rules_of_equal_options_are_kept_apart() -> None:
    """Looked up by the options object itself: equal options get rules of their
    own, and wild ranks theirs (no answer is taken for another's)."""
    if native is None:
        return
    a, b = Options(), Options()
    ra, rb = c_rules(Rank.SEVEN, a, 7), c_rules(Rank.SEVEN, b, 7)
    assert ra is not None and rb is not None and ra is not rb
    assert ra.args == rb.args
    assert c_rules(Rank.SEVEN, a, 7) is ra
    rk = c_rules(Rank.KING, a, 7)
    assert rk is not None and rk.args[1] == 48 and ra.args[1] == 24


POINTS = array("q", [1] * 53).tobytes()


@needs_native
@pytest.mark.parametrize(
    "args",
    [
        ([53], POINTS, 24, False, False, False),  # ids 0..52, the joker 52
        ([-1], POINTS, 24, False, False, False),
        (["2C"], POINTS, 24, False, False, False),
        (list(range(33)), POINTS, 24, False, False, False),  # more cards than MAX_CARDS
        ([0] * 16, POINTS, 24, False, False, False),  # more copies than a nibble counts
        (7, POINTS, 24, False, False, False),
        ([0], [1] * 53, 24, False, False, False),  # points: bytes
        ([0], POINTS[:-8], 24, False, False, False),  # 53 of them
        ([0], POINTS + POINTS[:8], 24, False, False, False),
        ([0], array("q", [-1] * 53).tobytes(), 24, False, False, False),  # 0..INF
        ([0], array("q", [INF + 1] * 53).tobytes(), 24, False, False, False),
        ([0], POINTS, 25, False, False, False),  # the wild rank's first id: 0, 4 .. 48
        ([0], POINTS, 52, False, False, False),
        ([0], POINTS, -4, False, False, False),
        ([0], POINTS, 24, False, False),  # must_meld is no option
    ],
)
def test_bad_input_is_refused_arrange(args: tuple[object, ...]) -> None:
    assert native is not None
    with pytest.raises((ValueError, TypeError)):
        native.arrange_free(*args)
    if len(args) == 6:  # the same hand and rules, to go_out_free
        with pytest.raises((ValueError, TypeError)):
            native.go_out_free(*args[:5], [0])


@needs_native
@pytest.mark.parametrize(
    "candidates",
    [
        [8],  # not in the hand
        [0, 8],
        [25],  # a wild-rank card the hand does not hold (sevens wild: 24..27)
        [52],  # no joker in the hand
        [53],
        [-1],
        ["AC"],
        [0.0],
        None,
    ],
)
def test_bad_candidates_are_refused(candidates: object) -> None:
    """go_out_free refuses what _going_out_discards refuses: candidates must be
    cards of the hand (all checked before any search)."""
    assert native is not None
    hand = [0, 0, 4, 24]  # AC AC 2C 7C
    with pytest.raises((ValueError, TypeError)):
        native.go_out_free(hand, POINTS, 24, False, False, candidates)
    cards = [Card.from_id(i) for i in hand]
    if isinstance(candidates, list) and all(
        isinstance(i, int) and 0 <= i <= 52 for i in candidates
    ):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(switch, "EXTENSION", None)
            with pytest.raises(ValueError):
                going_out_discards(
                    cards, Rank.SEVEN, Options(), list(map(Card.from_id, candidates))
                )


@needs_native
def test_go_out_free_answers_every_candidate_in_order() -> None:
    """One answer a candidate, duplicates included; no candidate, no answer."""
    assert native is not None
    pts = array("q", points_table(Rank.KING, Options())).tobytes()
    hand = [c.id for c in parse_cards("4H 5H 6H 7H 9C 9D 9S")]
    four, seven, nine = (Card.parse(x).id for x in ("4H", "7H", "9C"))
    found = native.go_out_free(hand, pts, 48, False, False, [nine, four, seven, four])
    assert found[0] is None
    assert found[1] == ((18, 22, 26), (32, 33, 35))  # 5H 6H 7H, 9C 9D 9S
    assert found[2] == ((14, 18, 22), (32, 33, 35)) and found[3] == found[1]
    assert native.go_out_free(hand, pts, 48, False, False, []) == []
