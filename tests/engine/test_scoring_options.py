"""How the scoring options change a round's result on states built directly (RULES.md
section 7): double_face_rounds, jokers and lay_off."""

from __future__ import annotations

import pytest

from service.engine import (
    Card,
    Game,
    MeldKind,
    Options,
    Rank,
    best_arrangement,
    classify_meld,
    observe,
)
from tests.engine.crafted import cards, codes, craft, play, types


@pytest.mark.parametrize(("index", "multiplier"), [(7, 1), (8, 2), (9, 2), (10, 2)])
def test_double_face_rounds(index: int, multiplier: int) -> None:
    size = index + 3
    filler = "2C 3D 4S 5C 6D 8S 9C 2D 3S 4C 5D 6S 8C"
    hand = " ".join(filler.split()[:size])
    other = " ".join(filler.split()[:size])
    state = craft(
        2,
        [hand, other],
        index=index,
        stock="AH",
        opts={"double_face_rounds": True, "max_turns_per_round": 1},
    )
    spec = state.spec
    play(state, 0, "draw stock")
    play(state, 0, "discard AH")
    result = state.results[-1]
    assert result.multiplier == multiplier
    base = best_arrangement(cards(other), spec.wild_rank, Options()).points
    assert base > 0
    assert result.hands[1].points == base * multiplier
    plain = craft(2, [hand, other], index=index, stock="AH", opts={"max_turns_per_round": 1})
    play(plain, 0, "draw stock")
    play(plain, 0, "discard AH")
    assert plain.results[-1].multiplier == 1 and plain.results[-1].hands[1].points == base


def test_double_face_rounds_in_up_down_schedule() -> None:
    game = Game(2, Options.from_dict({"double_face_rounds": True, "round_order": "up_down"}))
    doubled = [spec.hand_size for spec in game.rounds if game.round_multiplier(spec) == 2]
    assert doubled == [11, 12, 13, 13, 12, 11]
    game = Game(2, Options.from_dict({"double_face_rounds": True, "extra_rounds": 2}))
    assert [game.round_multiplier(s) for s in game.rounds][-4:] == [2, 2, 1, 1]


def test_jokers_score_20() -> None:
    state = craft(
        2,
        ["AS 2S 3S", "JK 5C 9D"],
        index=0,
        stock="KH",
        opts={"jokers_per_deck": 1, "max_turns_per_round": 1},
    )
    play(state, 0, "draw stock")
    play(state, 0, "discard KH")
    hand = state.results[-1].hands[1]
    assert sorted(codes(hand.deadwood)) == ["5C", "9D", "JK"] and hand.points == 34


# -- lay_off -----------------------------------------------------------------------------


def test_lay_off_final_turn_scores_zero() -> None:
    state = craft(
        2,
        ["4H 5H 6H 9C 9D 9S 7D", "2H 3H 9H 2S 2D 2C 7C"],
        stock="KD KS",
        opts={"lay_off": True},
    )
    play(state, 0, "draw stock")
    events = play(state, 0, "go_out KD 4H-5H-6H 9C-9D-9S-7D")
    assert events[0].type == "went_out"
    rnd = state.round
    assert rnd is not None
    assert [str(m) for m in rnd.table] == ["[4H 5H 6H]", "[9C 9D 9S 7D]"]
    assert rnd.table_owners == [0, 0]
    view = observe(state, 1)
    assert [m["seat"] for m in view["round"]["table"]] == [0, 0]
    assert view["arrangement"]["points"] == 0  # the seat sees what it could lay off
    play(state, 1, "draw stock")
    events = play(state, 1, "discard KS")
    assert types(events)[:3] == ["discarded", "laid_down", "round_ended"]
    result = state.results[-1]
    hand = result.hands[1]
    assert hand.points == 0 and hand.deadwood == ()
    laid_off = sorted(c for lo in hand.layoffs for c in lo.cards)
    laid_down = sorted(c for m in hand.melds for c in m.cards)
    assert sorted(laid_off + laid_down) == sorted(cards("2H 3H 9H 2S 2D 2C 7C"))
    assert {Card.parse("2H"), Card.parse("3H"), Card.parse("9H")} <= set(laid_off)
    assert {lo.target for lo in hand.layoffs} <= {0, 1}  # onto seat 0's melds
    assert state.totals == [0, 0]
    # the table melds after the lay-offs are valid melds, runs in ascending order
    assert len(result.table) == 2 + len(hand.melds)
    for meld in result.table:
        again = classify_meld(meld.cards, Rank.SEVEN, state.game.options)
        assert again is not None and again.kind is meld.kind
        if meld.kind is MeldKind.RUN:
            assert again.cards == meld.cards, str(meld)
    run = next(m for m in result.table if m.kind is MeldKind.RUN)
    assert codes(run.cards[:5]) == ["2H", "3H", "4H", "5H", "6H"]  # laid off at the low end


def test_without_lay_off_the_same_hand_scores_deadwood() -> None:
    state = craft(
        2,
        ["4H 5H 6H 9C 9D 9S 7D", "2H 3H 9H 2S 2D 2C 7C"],
        stock="KD KS",
    )
    play(state, 0, "draw stock")
    play(state, 0, "go_out KD")
    assert state.round.table == []  # type: ignore[union-attr]
    play(state, 1, "draw stock")
    events = play(state, 1, "discard KS")
    assert "laid_down" not in types(events)
    hand = state.results[-1].hands[1]
    assert hand.points == 9 and codes(hand.deadwood) == ["9H"]
    assert state.results[-1].table == ()
