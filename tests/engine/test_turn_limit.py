"""Rounds that end without anyone going out (RULES.md section 6): max_turns_per_round,
and the cap on turns per player when it is null."""

from __future__ import annotations

from service.engine import Discard, Draw, Game, Options, Rank, State, best_arrangement, legal_moves
from service.engine.rules import TURNS_PER_PLAYER_CAP
from tests.engine.crafted import HAND0, SEED, cards, craft, play, types


def test_turn_limit_ends_round_scoring_hands_as_they_stand() -> None:
    hands = ["4H 5H 6H 9C 9D 7S 2C", "2C 2D 8S 9S JH QH KH", "AC AD 3S 4S 5S 6D 8D"]
    state = craft(3, hands, stock="KD 3C 10C", opts={"max_turns_per_round": 3})
    play(state, 0, "draw stock")
    play(state, 0, "discard 2C")
    play(state, 1, "draw stock")
    events = play(state, 1, "discard 3C")
    assert "round_ended" not in types(events)
    play(state, 2, "draw stock")
    events = play(state, 2, "discard 10C")
    assert types(events)[1] == "round_ended"
    result = state.results[-1]
    assert result.ended_by == "turn_limit" and result.went_out is None
    expected = [
        best_arrangement(cards(h), Rank.SEVEN, Options()).points
        for h in ["4H 5H 6H 9C 9D 7S KD", "2C 2D 8S 9S JH QH KH", "AC AD 3S 4S 5S 6D 8D"]
    ]
    assert [h.points for h in result.hands] == expected == [10, 21, 16]
    assert state.totals == expected


def test_a_round_nobody_goes_out_of_still_ends() -> None:
    """With ``max_turns_per_round`` null, two players who never go out once played
    one round for ever (the stock reshuffled again and again).  The round now ends,
    scored as it stands, after TURNS_PER_PLAYER_CAP turns per player."""
    state = State.new(Game(2), SEED)
    turns = 0
    while len(state.results) == 0:
        rnd = state.round
        assert rnd is not None and turns <= 2 * TURNS_PER_PLAYER_CAP, "the round never ended"
        seat = rnd.turn
        drawn = [m for m in legal_moves(state, seat) if isinstance(m, Draw)][0]
        state.apply(seat, drawn)
        discard = [m for m in legal_moves(state, seat) if isinstance(m, Discard)][0]
        state.apply(seat, discard)
        turns += 1
    result = state.results[-1]
    assert result.ended_by == "turn_limit" and result.went_out is None
    assert turns == 2 * TURNS_PER_PLAYER_CAP


def test_turn_limit_does_not_cut_final_turns() -> None:
    state = craft(
        2,
        ["2C 2D 8S 9S JH QH KH", HAND0],
        stock="5D KD AS",
        opts={"max_turns_per_round": 2},
    )
    play(state, 0, "draw stock")
    play(state, 0, "discard 5D")
    play(state, 1, "draw stock")
    events = play(state, 1, "go_out KD")  # the limit's last turn: the final turns follow
    assert "round_ended" not in types(events) and state.round.turn == 0  # type: ignore[union-attr]
    play(state, 0, "draw stock")
    play(state, 0, "discard AS")
    result = state.results[-1]
    assert result.ended_by == "went_out" and result.went_out == 1
    assert state.totals == [21, 0]
