"""Targeted rule tests on states built directly (RULES.md sections 2-4, 6, 7)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from service.engine import (
    Card,
    Discard,
    Draw,
    Event,
    Game,
    GoOut,
    MeldKind,
    Move,
    Options,
    Phase,
    Rank,
    Round,
    Shuffler,
    Source,
    State,
    Status,
    best_arrangement,
    build_shoe,
    classify_meld,
    errors,
    legal_moves,
    observe,
    parse_cards,
    state_to_compact,
)
from service.engine.rules import TURNS_PER_PLAYER_CAP
from tests.engine.saved import copy_of, load, save

SEED = "5a" * 32
STOCK = Draw(Source.STOCK)
FROM_DISCARD = Draw(Source.DISCARD)


def cards(text: str) -> list[Card]:
    return parse_cards(text)


def craft(
    n: int,
    hands: list[str],
    *,
    stock: str = "",
    discard: str = "KC",
    index: int = 4,
    turn: int = 0,
    opts: dict[str, Any] | None = None,
    totals: list[int] | None = None,
) -> State:
    """A state in round ``index + 1`` (default: round 5, 7 cards, 7s wild).

    ``stock`` lists the stock with its top card first (the engine keeps it last).
    """
    game = Game(n, Options.from_dict(opts or {}))
    state = State(game, SEED, list(totals or [0] * n))
    state.round = Round(
        index=index,
        dealer=(turn - 1) % n,
        turn=turn,
        stock=cards(stock)[::-1],
        discard=cards(discard),
        hands=[sorted(cards(h)) for h in hands],
        penalties=[0] * n,
    )
    return state


def play(state: State, seat: int, text: str) -> list[Event]:
    return state.apply(seat, Move.parse(text))


def rejects(state: State, seat: int, move: Move | str, exc: type[Exception]) -> Exception:
    """``move`` raises ``exc`` and leaves the state exactly as it was."""
    if isinstance(move, str):
        move = Move.parse(move)
    before = save(state)
    with pytest.raises(exc) as info:
        state.apply(seat, move)
    assert save(state) == before
    return info.value


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def codes(cs: Any) -> list[str]:
    return [c.code for c in cs]


# -- deal, dealer, turn order ----------------------------------------------------


@pytest.mark.parametrize("n", range(2, 9))
def test_first_dealer_from_seed_and_play_starts_left(n: int) -> None:
    dealers = set()
    for i in range(12):
        seed = f"{i:02x}{n:02x}" * 16
        state, events = State.start(Game(n), seed)
        rnd = state.round
        assert rnd is not None
        assert rnd.dealer == Shuffler.from_hex(seed).choice_index("dealer", n)
        assert rnd.dealer == State.new(Game(n), seed).round.dealer  # type: ignore[union-attr]
        assert rnd.turn == (rnd.dealer + 1) % n
        assert rnd.phase is Phase.DRAW
        dealers.add(rnd.dealer)
        started = events[0]
        assert started.type == "round_started" and started.is_public
        assert started.data["dealer"] == rnd.dealer and started.data["turn"] == rnd.turn
        dealt = [e for e in events if e.type == "dealt"]
        assert [e.seat for e in dealt] == list(range(n))  # private to each seat
        assert all(len(h) == 3 for h in rnd.hands) and len(rnd.discard) == 1
        total = len(build_shoe(state.game.decks, 0))
        assert len(rnd.stock) == total - 3 * n - 1
    assert len(dealers) > 1  # the seed decides


def test_deal_rotates_left_each_round() -> None:
    n = 4
    state = State.new(Game(n, Options(max_turns_per_round=1)), SEED)
    first = state.round.dealer  # type: ignore[union-attr]
    for k, spec in enumerate(state.game.rounds):
        rnd = state.round
        assert rnd is not None and rnd.index == k
        assert rnd.dealer == (first + k) % n
        assert rnd.turn == (rnd.dealer + 1) % n
        assert all(len(h) == spec.hand_size for h in rnd.hands)
        seat = rnd.turn
        play(state, seat, "draw stock")
        events = state.apply(seat, Discard(rnd.hands[seat][-1]))
        assert "round_ended" in types(events)
    assert state.status is Status.FINISHED and len(state.results) == 11


# -- drawing and discarding ----------------------------------------------------------


def test_draw_discard_then_same_code_is_forbidden() -> None:
    state = craft(2, ["4H 5H 6H 9C 9D 7S 2C", "AC 2D 3D 5S 8S JD QD"], stock="3C", discard="QH KD")
    events = play(state, 0, "draw discard")
    assert types(events) == ["drew"] and events[0].data["card"] == "KD" and events[0].is_public
    err = rejects(state, 0, "discard KD", errors.DiscardForbiddenError)
    assert err.code == "DISCARD_FORBIDDEN"
    rejects(state, 0, "go_out KD 4H-5H-6H 9C-9D-7S 2C", errors.DiscardForbiddenError)
    rejects(state, 0, "go_out KD", errors.DiscardForbiddenError)
    assert Discard(Card.parse("KD")) not in legal_moves(state, 0)
    assert all(getattr(m, "discard", None) != Card.parse("KD") for m in legal_moves(state, 0))
    play(state, 0, "discard 2C")
    assert state.round.discard == cards("QH 2C")  # type: ignore[union-attr]


def test_same_code_forbidden_even_with_a_second_copy_in_hand() -> None:
    state = craft(
        3,
        ["KD 5H 6H 9C 9D 7S 2C", "AC 2D 3D 5S 8S JD QD", "AS 2S 3S 4S 8C JC QC"],
        discard="KD",
    )
    play(state, 0, "draw discard")
    assert state.round.hands[0].count(Card.parse("KD")) == 2  # type: ignore[union-attr]
    rejects(state, 0, "discard KD", errors.DiscardForbiddenError)
    play(state, 0, "discard 2C")


def test_draw_stock_is_private_to_the_drawer() -> None:
    state = craft(2, ["4H 5H 6H 9C 9D 7S 2C", "AC 2D 3D 5S 8S JD QD"], stock="3C 4C")
    events = play(state, 0, "draw stock")
    assert [(e.type, e.seat) for e in events] == [("drew", None), ("drew", 0)]
    assert "card" not in events[0].data and events[1].data["card"] == "3C"
    assert state.round.stock == cards("4C")  # type: ignore[union-attr]


def test_stock_runs_out_discards_are_reshuffled() -> None:
    state = craft(
        2, ["4H 5H 6H 9C 9D 7S 2C", "AC 2D 3D 5S 8S JD QD"], stock="", discard="3C 4C 5C 6C KH"
    )
    before = Counter(c for h in state.round.hands for c in h) + Counter(  # type: ignore[union-attr]
        state.round.discard  # type: ignore[union-attr]
    )
    assert STOCK in legal_moves(state, 0)
    events = play(state, 0, "draw stock")
    assert types(events) == ["stock_reshuffled", "drew", "drew"]
    assert events[0].is_public and events[0].data == {"stock_size": 4}
    rnd = state.round
    assert rnd is not None
    assert rnd.discard == cards("KH") and rnd.reshuffles == 1
    drawn = Card.parse(events[2].data["card"])
    assert drawn in cards("3C 4C 5C 6C") and drawn in rnd.hands[0]
    assert sorted(rnd.stock + [drawn]) == cards("3C 4C 5C 6C")
    after = Counter(c for h in rnd.hands for c in h) + Counter(rnd.discard + rnd.stock)
    assert after == before
    # the reshuffle is seeded: a restored copy reshuffles the same way
    again = craft(
        2, ["4H 5H 6H 9C 9D 7S 2C", "AC 2D 3D 5S 8S JD QD"], stock="", discard="3C 4C 5C 6C KH"
    )
    play(again, 0, "draw stock")
    assert again.round.stock == rnd.stock  # type: ignore[union-attr]


def test_nothing_to_reshuffle_stock_unavailable() -> None:
    state = craft(2, ["4H 5H 6H 9C 9D 7S 2C", "AC 2D 3D 5S 8S JD QD"], stock="", discard="KH")
    assert legal_moves(state, 0) == [FROM_DISCARD]
    err = rejects(state, 0, STOCK, errors.StockUnavailableError)
    assert err.code == "STOCK_UNAVAILABLE"
    play(state, 0, "draw discard")
    rejects(state, 0, "discard KH", errors.DiscardForbiddenError)
    play(state, 0, "discard 2C")
    assert legal_moves(state, 1) == [FROM_DISCARD]


# -- going out -----------------------------------------------------------------------


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


HAND0 = "4H 5H 6H 9C 9D 9S 7S"  # round 5: 7S is wild; goes out after drawing KD


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


# -- max_turns_per_round, double_face_rounds, jokers ------------------------------------


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


# -- game end, winners, errors -----------------------------------------------------------


def _last_round(prior: list[int]) -> State:
    # up_down: the 22nd and last round deals 3 cards with 3s wild
    return craft(
        3,
        ["AC AD AS", "5C 9D KH", "2C 4D 8H"],
        index=21,
        stock="KD",
        opts={"round_order": "up_down", "max_turns_per_round": 1},
        totals=prior,
    )


@pytest.mark.parametrize(
    ("prior", "totals", "winners"),
    [
        ([30, 6, 16], [30, 30, 30], [0, 1, 2]),
        ([31, 6, 16], [31, 30, 30], [1, 2]),
        ([5, 6, 16], [5, 30, 30], [0]),
    ],
)
def test_game_end_and_shared_winners(
    prior: list[int], totals: list[int], winners: list[int]
) -> None:
    state = _last_round(prior)
    assert state.spec.number == 22 and state.spec.hand_size == 3
    play(state, 0, "draw stock")
    events = play(state, 0, "discard KD")
    assert types(events) == ["discarded", "round_ended", "game_finished"]
    assert [h.points for h in state.results[-1].hands] == [0, 24, 14]
    assert state.totals == totals and state.winners == winners
    assert events[-1].data == {"winners": winners, "totals": totals}
    assert state.status is Status.FINISHED and state.round is None
    view = observe(state)
    assert view["status"] == "finished" and view["winners"] == winners
    for seat in range(3):
        assert legal_moves(state, seat) == []
        err = rejects(state, seat, STOCK, errors.GameNotInProgressError)
        assert err.code == "GAME_NOT_IN_PROGRESS"
        rejects(state, seat, "discard KD", errors.GameNotInProgressError)
    # the finished state round-trips, and its event data is not tied to the state
    d = save(state)
    assert save(load(d)) == d
    events[-1].data["totals"].append(99)
    d[0]["totals"].append(99)
    assert state.totals == totals


def test_not_your_turn_and_wrong_phase_change_nothing() -> None:
    state = craft(3, [HAND0, "AC 2D 3D 5S 8S JD QD", "AS 2S 3S 8C 8D 8H KS"], stock="KD 3C")
    for seat in (1, 2, 5, -1):
        err = rejects(state, seat, STOCK, errors.NotYourTurnError)
        assert err.code == "NOT_YOUR_TURN"
        assert legal_moves(state, seat) == []
    err = rejects(state, 0, "discard 2C", errors.WrongPhaseError)
    assert err.code == "WRONG_PHASE"
    rejects(state, 0, "go_out KD", errors.WrongPhaseError)
    play(state, 0, "draw stock")
    rejects(state, 0, STOCK, errors.WrongPhaseError)
    rejects(state, 0, FROM_DISCARD, errors.WrongPhaseError)
    rejects(state, 1, "discard AC", errors.NotYourTurnError)
    rejects(state, 0, "discard QS", errors.CardNotInHandError)
    assert isinstance(errors.NotYourTurnError("x"), errors.IllegalMoveError)
    assert isinstance(errors.WrongPhaseError("x"), errors.StateConflictError)


def test_the_stored_form_is_a_snapshot() -> None:
    state = _go_out_state(opts={"false_go_out_penalty": 20})
    before = state_to_compact(state)
    play(state, 0, "go_out 9S")  # refused: the penalty changes the state
    assert before["round"]["penalties"] == [0, 0]
    assert state_to_compact(state)["round"]["penalties"] == [20, 0]
    before["totals"].append(1)
    assert state.totals == [0, 0]
