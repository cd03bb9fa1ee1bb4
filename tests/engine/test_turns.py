"""Turn order on states built directly (RULES.md sections 2-3): the dealer and the deal,
drawing and discarding, the stock reshuffled, and moves out of turn or phase."""

from __future__ import annotations

from collections import Counter

import pytest

from service.engine import (
    Card,
    Discard,
    Game,
    Options,
    Phase,
    Shuffler,
    State,
    Status,
    build_shoe,
    errors,
    legal_moves,
)
from tests.engine.crafted import (
    FROM_DISCARD,
    HAND0,
    SEED,
    STOCK,
    cards,
    craft,
    play,
    rejects,
    types,
)


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
        # the first turn has its own public event, after the deal, like every turn
        assert (events[-1].type, events[-1].data, events[-1].is_public) == (
            "turn",
            {"seat": rnd.turn},
            True,
        )
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
        if state.round is not None:  # the next round's first turn is told too
            assert types(events)[-1] == "turn"
            assert events[-1].data == {"seat": state.round.turn}
    assert state.status is Status.FINISHED and len(state.results) == 11


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
