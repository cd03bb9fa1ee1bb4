"""Going out on states built directly (RULES.md section 4): valid and invalid claims, the
final turns, and the false_go_out_penalty option for a claim that is refused."""

from __future__ import annotations

from typing import Any

import pytest

from service.engine import (
    Card,
    Discard,
    Game,
    GoOut,
    Options,
    Phase,
    Rank,
    State,
    classify_meld,
    errors,
    legal_moves,
    state_to_compact,
)
from tests.engine.crafted import HAND0, SEED, cards, codes, craft, play, rejects, types
from tests.engine.saved import copy_of


def test_go_out_on_the_first_turn() -> None:
    state = State.new(Game(2), SEED)
    rnd = state.round
    assert rnd is not None and rnd.turns_taken == 0
    seat = rnd.turn
    # round 1 (3s wild): give the first player a run and put a king on the stock
    rnd.hands[seat] = cards("5H 6H 7H")
    rnd.stock.append(Card.parse("KD"))
    play(state, seat, "draw stock")
    go = GoOut(Card.parse("KD"), (tuple(cards("5H 6H 7H")),))
    assert go in legal_moves(state, seat)
    events = state.apply(seat, go)
    assert types(events) == ["went_out", "turn"]
    assert events[0].data == {
        "seat": seat,
        "melds": [{"kind": "run", "cards": ["5H", "6H", "7H"]}],
        "discard": "KD",
    }
    assert rnd.went_out == seat and rnd.final_turns_left == 1
    assert rnd.discard[-1] == Card.parse("KD")


def _go_out_state(**kw: Any) -> State:
    state = craft(2, [HAND0, "AC 2D 3D 5S 8S JD QD"], stock="KD 3C", **kw)
    play(state, 0, "draw stock")
    return state


def test_go_out_with_explicit_melds() -> None:
    state = _go_out_state()
    events = play(state, 0, "go_out KD 7S-9D-9S-9C 6H-4H-5H")  # any order of cards and melds
    assert events[0].type == "went_out"
    assert events[0].data["melds"] == [
        {"kind": "set", "cards": ["9C", "9D", "9S", "7S"]},
        {"kind": "run", "cards": ["4H", "5H", "6H"]},
    ]
    assert events[0].data["discard"] == "KD" and events[1].data == {"seat": 1}
    assert state.round.went_out == 0  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("move", "exc"),
    [
        ("go_out 9S 4H-5H-6H-9C 9D-7S-KD", errors.InvalidMeldsError),  # not melds
        ("go_out KD 4H-5H-6H-9S 9C-9D-7S", errors.InvalidMeldsError),  # not melds
        ("go_out KD 4H-5H-6H 9C-9D-7S", errors.InvalidMeldsError),  # 9S left over
        ("go_out 9S 4H-5H-6H 9C-9D-7S", errors.InvalidMeldsError),  # KD left over
        ("go_out KD 4H-5H-6H-9S-9C-9D-7S", errors.InvalidMeldsError),  # one meld? no
        ("go_out KD 4H-5H-6H 9C-9D-9S-7S-9H", errors.CardNotInHandError),  # 9H not held
        ("go_out KD 4H-5H-6H 9C-9D-9S 7S-6H-5H", errors.CardNotInHandError),  # used twice
        ("go_out QS 4H-5H-6H 9C-9D-9S-7S", errors.CardNotInHandError),  # discard not held
        ("go_out QS", errors.CardNotInHandError),
        ("go_out 9S", errors.InvalidMeldsError),  # no melds found for the rest
        ("go_out 4H", errors.InvalidMeldsError),
    ],
)
def test_invalid_go_out_changes_nothing(move: str, exc: type[Exception]) -> None:
    state = _go_out_state()
    err = rejects(state, 0, move, exc)
    assert err.code == exc.code  # type: ignore[attr-defined]
    if exc is errors.InvalidMeldsError:
        assert err.code == "INVALID_MELDS"
    else:
        assert err.code == "CARD_NOT_IN_HAND"


def test_go_out_without_melds_engine_finds_them() -> None:
    state = _go_out_state()
    events = play(state, 0, "go_out KD")
    assert events[0].type == "went_out"
    melds = events[0].data["melds"]
    laid = sorted(c for m in melds for c in m["cards"])
    assert laid == sorted(HAND0.split())
    for m in melds:
        assert classify_meld(cards(" ".join(m["cards"])), Rank.SEVEN, Options()) is not None


def test_legal_go_outs_are_exactly_the_meldable_discards() -> None:
    state = _go_out_state()
    go_outs = [m for m in legal_moves(state, 0) if isinstance(m, GoOut)]
    assert {m.discard.code for m in go_outs} == {"KD"}
    assert types(state.apply(0, go_outs[0]))[0] == "went_out"


def test_every_other_player_takes_one_more_turn_then_round_scored() -> None:
    hands = [
        "AC 2D 3D 5S 8S JD QD",
        HAND0,
        "AS 2S 3S 8C 8D 10C KS",
        "6C 6D 6S JC JH JS QH",
    ]
    state = craft(4, hands, turn=1, stock="KD 2H 3H 4C 5C")
    play(state, 1, "draw stock")
    events = play(state, 1, "go_out KD")
    assert events[-1].data == {"seat": 2}
    rnd = state.round
    assert rnd is not None and rnd.went_out == 1 and rnd.final_turns_left == 3
    order = []
    for _ in range(3):
        seat = rnd.turn
        order.append(seat)
        assert legal_moves(state, 1) == []
        play(state, seat, "draw stock")
        events = state.apply(seat, Discard(rnd.hands[seat][-1]))
        if seat != 0:
            assert rnd.final_turns_left == 3 - len(order)
    assert order == [2, 3, 0]
    assert "round_ended" in types(events)
    result = state.results[-1]
    assert result.went_out == 1 and result.ended_by == "went_out"
    assert result.hands[1].points == 0
    assert state.round is not None and state.round.index == 5  # next round dealt
    # results reveal every hand
    assert [h.seat for h in result.hands] == [0, 1, 2, 3]
    ended = next(e for e in events if e.type == "round_ended")
    assert ended.is_public and len(ended.data["result"]["hands"]) == 4
    assert ended.data["totals"] == state.totals


def test_going_out_during_the_final_turn_scores_zero() -> None:
    state = craft(2, [HAND0, "AS 2S 3S 8C 8D 8H 7H"], stock="KD QC")
    play(state, 0, "draw stock")
    play(state, 0, "go_out KD")
    play(state, 1, "draw stock")
    events = play(state, 1, "go_out QC AS-2S-3S 8C-8D-8H-7H")
    assert types(events)[:2] == ["went_out", "round_ended"]
    result = state.results[-1]
    assert result.went_out == 0
    assert [h.points for h in result.hands] == [0, 0]
    assert state.totals == [0, 0]


def test_final_turn_hand_scored_by_best_arrangement() -> None:
    state = craft(2, [HAND0, "2C 2D 8S 9S JH QH KH"], stock="KD AS")
    play(state, 0, "draw stock")
    play(state, 0, "go_out KD")
    play(state, 1, "draw stock")
    play(state, 1, "discard AS")
    hand = state.results[-1].hands[1]
    assert [str(m) for m in hand.melds] == ["[JH QH KH]"]
    assert codes(hand.deadwood) == ["2C", "2D", "8S", "9S"] and hand.points == 21
    assert state.totals == [0, 21]


# -- false_go_out_penalty --------------------------------------------------------------


def test_false_go_out_without_penalty_is_rejected() -> None:
    state = _go_out_state()
    rejects(state, 0, "go_out 9S", errors.InvalidMeldsError)
    assert state.round.penalties == [0, 0]  # type: ignore[union-attr]


def test_false_go_out_penalty() -> None:
    state = _go_out_state(opts={"false_go_out_penalty": 20})
    events = play(state, 0, "go_out 9S")
    assert types(events) == ["go_out_refused", "go_out_refused"]
    assert events[0].data["seat"] == 0 and events[0].data["penalty"] == 20
    assert events[0].is_public and "reason" not in events[0].data  # may quote the cards
    assert events[1].seat == 0 and events[1].data["reason"] and events[1].data["penalty"] == 20
    rnd = state.round
    assert rnd is not None
    assert rnd.penalties == [20, 0] and rnd.claim_refused and rnd.phase is Phase.DISCARD
    assert len(rnd.hands[0]) == 8 and rnd.turn == 0  # hand unchanged, still to discard
    # a second claim, even a valid one, is refused; only discards are legal
    err = rejects(state, 0, "go_out KD", errors.GoOutForbiddenError)
    assert err.code == "GO_OUT_FORBIDDEN"
    rejects(state, 0, "go_out KD 4H-5H-6H 9C-9D-9S-7S", errors.GoOutForbiddenError)
    assert rnd.penalties == [20, 0]  # a refused second claim costs nothing
    assert all(isinstance(m, Discard) for m in legal_moves(state, 0))
    # the codec keeps the refusal
    restored = copy_of(state)
    rejects(restored, 0, "go_out KD", errors.GoOutForbiddenError)
    play(state, 0, "discard KD")
    assert not rnd.claim_refused and rnd.turn == 1 and rnd.penalties == [20, 0]


def test_false_go_out_penalty_recorded_in_round_result() -> None:
    state = craft(
        2,
        ["4H 5H 6H 9C 9D 9S 2C", "AS 2S 3S 8C 8D 8H KS"],
        stock="KD QC",
        opts={"false_go_out_penalty": 20, "max_turns_per_round": 2},
    )
    play(state, 0, "draw stock")
    play(state, 0, "go_out 2C 4H-5H-6H 9C-9D-9S-KD")  # invalid melds: refused, +20
    play(state, 0, "discard KD")
    play(state, 1, "draw stock")
    events = play(state, 1, "discard QC")
    ended = next(e for e in events if e.type == "round_ended")
    result = state.results[-1]
    assert result.ended_by == "turn_limit"
    assert result.hands[0].penalty == 20
    assert result.hands[0].points == 2 + 20  # deadwood 2C plus the penalty
    assert ended.data["result"]["hands"][0]["penalty"] == 20
    assert result.hands[1].penalty == 0 and result.hands[1].points == 10
    assert state.totals == [22, 10]


def test_false_go_out_penalty_counts_when_going_out_later() -> None:
    state = craft(
        2,
        ["4H 5H 6H 9C 9D 9S 2C", "AS 2S 3S 8C 8D 8H KS"],
        stock="KD QC 3H JD",
        opts={"false_go_out_penalty": 20},
    )
    play(state, 0, "draw stock")
    play(state, 0, "go_out 2C")  # refused
    play(state, 0, "discard KD")
    play(state, 1, "draw stock")
    play(state, 1, "discard QC")
    play(state, 0, "draw stock")  # 3H
    play(state, 0, "go_out 2C")  # 3H 4H 5H 6H, 9C 9D 9S
    play(state, 1, "draw stock")
    play(state, 1, "discard JD")
    assert state.results[-1].hands[0].points == 20
    assert state.totals[0] == 20


def test_the_stored_form_is_a_snapshot() -> None:
    state = _go_out_state(opts={"false_go_out_penalty": 20})
    before = state_to_compact(state)
    play(state, 0, "go_out 9S")  # refused: the penalty changes the state
    assert before["round"]["penalties"] == [0, 0]
    assert state_to_compact(state)["round"]["penalties"] == [20, 0]
    before["totals"].append(1)
    assert state.totals == [0, 0]
