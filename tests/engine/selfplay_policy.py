"""The move self-play makes (tests/engine/test_selfplay.py): random legal moves with a
bias towards going out (and a greedy discard most of the time, so rounds end); under
``false_go_out_penalty`` sometimes an invalid claim; or, ``stubborn``, always the stock
and never out (the stock runs out)."""

from __future__ import annotations

import random

from service.engine import Discard, GoOut, Move, Phase, State, best_arrangement, legal_moves


def choose(state: State, rng: random.Random, stubborn: bool = False) -> Move:
    """``stubborn``: always draw from the stock and never go out (the stock runs out)."""
    rnd = state.round
    assert rnd is not None
    seat = rnd.turn
    moves = legal_moves(state, seat)
    assert moves
    if rnd.phase is Phase.DRAW:
        return moves[0] if stubborn else rng.choice(moves)
    if stubborn:
        return rng.choice([m for m in moves if isinstance(m, Discard)])
    go_outs = [m for m in moves if isinstance(m, GoOut)]
    discards = [m for m in moves if isinstance(m, Discard)]
    if go_outs and rng.random() < 0.85:
        m = rng.choice(go_outs)
        assert m.melds is not None
        roll = rng.random()
        if roll < 0.3:
            return GoOut(m.discard)  # let the engine find the melds
        if roll < 0.6:  # the same melds in another order
            melds = [tuple(rng.sample(meld, len(meld))) for meld in m.melds]
            rng.shuffle(melds)
            return GoOut(m.discard, tuple(melds))
        return m
    if (
        state.game.options.false_go_out_penalty is not None
        and not rnd.claim_refused
        and rng.random() < 0.15
    ):
        ok = {m.discard for m in go_outs}
        bad = [m.card for m in discards if m.card not in ok]
        if bad:
            return GoOut(rng.choice(bad))  # an invalid claim
    if rng.random() < 0.9:  # greedy: keep the best hand
        spec = state.spec
        hand = rnd.hands[seat]

        def left(m: Discard) -> int:
            rest = list(hand)
            rest.remove(m.card)
            return best_arrangement(rest, spec.wild_rank, state.game.options).points

        return min(discards, key=left)
    return rng.choice(discards)
