"""arrangement_after_discard: the arrangement a seat's view shows after a discard,
carried over from the hand before when the card was deadwood there, is as good as
a solve of the new hand, valid, and never used where it would not be."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from service.engine.cards import parse_cards
from service.engine.melds import classify_meld
from service.engine.moves import Discard, Draw, Source
from service.engine.options import PRESETS
from service.engine.rounds import Phase
from service.engine.rules import Game
from service.engine.solver import best_arrangement
from service.engine.state import State, legal_moves
from service.engine.view import arrangement_after_discard, arrangement_key, seat_part
from service.hosting.timers import automatic_finish


def discard_turns(state: State, last_round: int | None = None) -> Iterator[tuple[int, Any, Any]]:
    """Play draws from the stock; at each discard (up to round ``last_round``, if
    given) yield ``(seat, arrangement_key, arrangement shown)`` for the caller to play."""
    while state.round is not None and (last_round is None or state.spec.number <= last_round):
        seat = state.round.turn
        if state.round.phase is Phase.DRAW:
            state.apply(seat, Draw(Source.STOCK))
            continue
        yield seat, arrangement_key(state, seat), seat_part(state, seat)["arrangement"]


@pytest.mark.parametrize("ruleset", sorted(PRESETS))
def test_a_deadwood_discard_keeps_an_arrangement_as_good_as_a_solve(ruleset: str) -> None:
    rng = random.Random(ruleset)
    carried = refused = 0
    for game_no in range(3):
        state = State.new(Game(3, PRESETS[ruleset]), seed=f"{game_no:02x}" * 32)
        for seat, key, shown in discard_turns(state, last_round=9):
            rnd = state.round
            assert rnd is not None
            # half of the discards are any legal card (melded ones too), half greedy
            move = automatic_finish(state, seat)
            if rng.random() < 0.5:
                move = rng.choice([m for m in legal_moves(state, seat) if isinstance(m, Discard)])
            state.apply(seat, move)
            if not isinstance(move, Discard) or state.round is not rnd:
                continue  # went out: the round is over
            now = arrangement_key(state, seat)
            after = None if key is None else arrangement_after_discard(state, now, (key, shown))
            if key is None or move.card.code not in shown["deadwood"]:
                assert after is None
                refused += 1
                continue
            assert after is not None
            carried += 1
            hand = rnd.hands[seat]
            spec, options = state.spec, state.game.options
            assert after["points"] == best_arrangement(hand, spec.wild_rank, options).points
            assert after["melds"] == shown["melds"]
            melded = [parse_cards(" ".join(m["cards"])) for m in after["melds"]]
            for meld in melded:
                assert classify_meld(meld, spec.wild_rank, options) is not None
            used = Counter(c for meld in melded for c in meld)
            used.update(parse_cards(" ".join(after["deadwood"])))
            assert used == Counter(hand)
    assert carried > 50 and refused > 20


def test_only_the_hand_before_less_one_deadwood_card_is_carried() -> None:
    state = State.new(Game(2), seed="ab" * 32)
    seat = state.round.turn if state.round else 0
    state.apply(seat, Draw(Source.STOCK))
    key = arrangement_key(state, seat)
    assert key is not None
    shown = seat_part(state, seat)["arrangement"]
    assert arrangement_after_discard(state, key, (key, shown)) is None  # same hand
    index, ids = key
    other_round = ((index + 1, ids), shown)
    not_a_superset = ((index, tuple(sorted((*ids[1:], 51, 52)))), shown)
    for before in (other_round, not_a_superset):
        assert arrangement_after_discard(state, key, before) is None


def test_a_melded_card_discarded_is_not_carried() -> None:
    """Discarding a card of a meld needs a solve: the melds shown no longer hold."""
    for game_no in range(20):
        state = State.new(Game(2), seed=f"{game_no + 40:02x}" * 32)
        for seat, key, shown in discard_turns(state):
            melded = [c for meld in shown["melds"] for c in meld["cards"]]
            if key is not None and melded:
                state.apply(seat, Discard(parse_cards(melded[0])[0]))
                now = arrangement_key(state, seat)
                assert arrangement_after_discard(state, now, (key, shown)) is None
                return
            state.apply(seat, automatic_finish(state, seat))
    raise AssertionError("no hand with a meld to break")
