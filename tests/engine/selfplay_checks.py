"""What self-play checks of a state (tests/engine/test_selfplay.py): after every action,
no card created or lost, hand sizes, scores never negative; the illegal moves to try
and the error each must raise; a round's result against the hands it scored; and a
cheap copy of a state to try legal moves on."""

from __future__ import annotations

import dataclasses
import functools
import random
from collections import Counter

from service.engine import (
    Card,
    Discard,
    Draw,
    Event,
    GoOut,
    Move,
    Phase,
    ResultLog,
    Source,
    State,
    best_arrangement,
    build_shoe,
    card_points,
    errors,
)
from tests.engine.saved import Saved, load


@functools.cache
def _shoe(decks: int, jokers_per_deck: int) -> Counter[Card]:
    return Counter(build_shoe(decks, jokers_per_deck))


def check_invariants(state: State) -> None:
    game = state.game
    assert all(t >= 0 for t in state.totals)
    for result in state.results:
        assert all(h.points >= 0 for h in result.hands)
    rnd = state.round
    if rnd is None:
        return
    held = Counter(rnd.stock + rnd.discard + [c for hand in rnd.hands for c in hand])
    assert held == _shoe(game.decks, game.options.jokers_per_deck), "cards created or lost"
    size = state.spec.hand_size
    for seat, hand in enumerate(rnd.hands):
        extra = 1 if seat == rnd.turn and rnd.phase is Phase.DISCARD else 0
        assert len(hand) == size + extra, (seat, len(hand), size)
        assert hand == sorted(hand)
    assert all(p >= 0 for p in rnd.penalties)
    if rnd.phase is Phase.DRAW:
        assert rnd.discard, "a turn starts with a discard pile"
        assert rnd.drawn_from_discard is None and not rnd.claim_refused
    if rnd.went_out is None:
        assert rnd.final_turns_left == 0
    else:
        assert 1 <= rnd.final_turns_left < game.num_players
        assert rnd.turn != rnd.went_out
    limit = game.options.max_turns_per_round
    if limit is not None and rnd.went_out is None:
        assert rnd.turns_taken < limit


def illegal_samples(
    state: State, legal: list[Move], rng: random.Random
) -> list[tuple[int, Move, type[Exception]]]:
    rnd = state.round
    assert rnd is not None
    n = state.game.num_players
    seat = rnd.turn
    other = (seat + rng.randrange(1, n)) % n
    hand = rnd.hands[seat]
    missing = [c for c in map(Card.from_id, range(53)) if c not in hand]
    out: list[tuple[int, Move, type[Exception]]] = [
        (other, Draw(Source.STOCK), errors.NotYourTurnError),
        (other, Discard(rnd.hands[other][0]), errors.NotYourTurnError),
    ]
    if rnd.phase is Phase.DRAW:
        out.append((seat, Discard(rng.choice(hand)), errors.WrongPhaseError))
        out.append((seat, GoOut(rng.choice(hand)), errors.WrongPhaseError))
    else:
        out.append((seat, Draw(rng.choice(list(Source))), errors.WrongPhaseError))
        out.append((seat, Discard(rng.choice(missing)), errors.CardNotInHandError))
        # after a refused claim every go-out is refused first
        go_out_error = (
            errors.GoOutForbiddenError if rnd.claim_refused else errors.CardNotInHandError
        )
        out.append((seat, GoOut(rng.choice(missing)), go_out_error))
        if rnd.drawn_from_discard is not None:
            out.append((seat, Discard(rnd.drawn_from_discard), errors.DiscardForbiddenError))
        if rnd.claim_refused:
            out.append((seat, GoOut(hand[0]), errors.GoOutForbiddenError))
        elif state.game.options.false_go_out_penalty is None:
            legal_discards = {m.discard for m in legal if isinstance(m, GoOut)}
            bad = [c for c in hand if c not in legal_discards and c != rnd.drawn_from_discard]
            if bad:
                out.append((seat, GoOut(rng.choice(bad)), errors.InvalidMeldsError))
    return out


def check_round_result(state: State, before: Saved, events: list[Event]) -> None:
    """A round just ended: every hand revealed, points consistent with the deadwood."""
    ended = [e for e in events if e.type == "round_ended"]
    if not ended:
        return
    result = state.results[-1]
    old = load(before)
    assert old.round is not None
    spec = old.spec
    assert result.number == spec.number and result.wild_rank == spec.wild_rank
    assert result.multiplier == old.game.round_multiplier(spec)
    for hand in result.hands:
        shown = Counter(hand.deadwood)
        for meld in hand.melds:
            shown += Counter(meld.cards)
        for lo in hand.layoffs:
            shown += Counter(lo.cards)
        assert len(list(shown.elements())) == spec.hand_size
        dead = sum(card_points(c, spec.wild_rank, old.game.options) for c in hand.deadwood)
        assert hand.points == dead * result.multiplier + hand.penalty
        if hand.seat == result.went_out:
            assert not hand.deadwood and hand.points == hand.penalty
    if result.ended_by == "turn_limit":
        assert result.went_out is None
        assert old.round.turns_taken + 1 == old.game.options.max_turns_per_round
        assert not result.table
        for hand in result.hands:  # scored as they stand (the mover's hand lost its discard)
            if hand.seat == old.round.turn:
                continue
            best = best_arrangement(old.round.hands[hand.seat], spec.wild_rank, old.game.options)
            assert hand.points == best.points * result.multiplier + hand.penalty
    else:
        assert result.ended_by == "went_out" and result.went_out is not None


def clone(state: State) -> State:
    """A cheap deep-enough copy (results are frozen and can be shared)."""
    rnd = state.round
    assert rnd is not None
    copy = dataclasses.replace(
        rnd,
        stock=list(rnd.stock),
        discard=list(rnd.discard),
        hands=[list(h) for h in rnd.hands],
        table=list(rnd.table),
        table_owners=list(rnd.table_owners),
        scored=dict(rnd.scored),
        penalties=list(rnd.penalties),
    )
    return State(
        state.game,
        state.seed,
        list(state.totals),
        copy,
        ResultLog(state.results.dicts()),
        list(state.winners),
    )
