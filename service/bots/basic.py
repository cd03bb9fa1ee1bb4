"""The ``basic`` level: greedy on its own hand.

- Goes out as soon as a go-out is legal.
- Draws the top discard when keeping it lowers the best-arrangement points of
  its hand (after the best discard it could then make), else draws the stock.
- Discards the card whose loss leaves the fewest deadwood points (so it keeps
  the cards that build melds), the costliest such card on a tie.
- In a round far longer than any normal one (a stalemate), makes one discard in
  four at random (:func:`~service.bots.common.stalemate_discard`).
"""

from __future__ import annotations

import random
from typing import Any

from service.bots.common import Seen, stalemate_discard, without
from service.engine.moves import Move, Source


def decide(
    view: dict[str, Any], rng: random.Random, history: list[dict[str, Any]] | None = None
) -> Move:
    seen = Seen.of(view)
    if len(seen.legal) == 1:
        return seen.legal[0]
    ctx = seen.ctx
    if seen.phase == "draw":
        forced = seen.forced_draw()
        if forced is not None:
            return forced
        better = seen.deadwood_taking_top() < ctx.deadwood(seen.hand)
        move = seen.draw(Source.DISCARD if better else Source.STOCK)
        assert move is not None
        return move
    go_outs = seen.go_outs()
    if go_outs:
        return max(go_outs, key=lambda m: ctx.points[m.discard.id])
    shaken = stalemate_discard(seen, rng)
    if shaken is not None:
        return shaken
    options = seen.discards()
    best = min(options, key=lambda c: (ctx.deadwood(without(seen.hand, c)), -ctx.points[c], c))
    return options[best]
