"""The ``basic`` level: greedy on its own hand.

- Goes out as soon as a go-out is legal.
- Draws the top discard when keeping it lowers the best-arrangement points of
  its hand (after the best discard it could then make), else draws the stock.
- Discards the card whose loss leaves the fewest deadwood points (so it keeps
  the cards that build melds), the costliest such card on a tie.
"""

from __future__ import annotations

import random
from typing import Any

from service.bots.common import Seen, with_card, without
from service.engine.moves import Move, Source


def decide(
    view: dict[str, Any], rng: random.Random, history: list[dict[str, Any]] | None = None
) -> Move:
    seen = Seen.of(view)
    if len(seen.legal) == 1:
        return seen.legal[0]
    ctx = seen.ctx
    if seen.phase == "draw":
        stock = seen.draw(Source.STOCK)
        take = seen.draw(Source.DISCARD)
        if take is None or seen.discard_top is None:
            assert stock is not None
            return stock
        if stock is None:
            return take
        top = seen.discard_top
        held = with_card(seen.hand, top)
        after = min((ctx.deadwood(without(held, c)) for c in set(held) if c != top), default=10**6)
        return take if after < ctx.deadwood(seen.hand) else stock
    go_outs = seen.go_outs()
    if go_outs:
        return max(go_outs, key=lambda m: ctx.points[m.discard.id])
    options = seen.discards()
    best = min(options, key=lambda c: (ctx.deadwood(without(seen.hand, c)), -ctx.points[c], c))
    return options[best]
