"""The ``expert`` level: ``strong``'s knowledge, with the round played out.

From the same seat view and public events as ``strong`` (it is in
:data:`service.bots.TRACKING`), for each choice that matters it:

- **Samples the hidden cards** (determinization): the other hands and the
  stock are dealt, :func:`samples` times, from the cards this seat has not seen
  (:class:`~service.bots.strong.Tracker`), each opponent holding the cards it
  is known to hold (taken from the discard pile and not thrown back since) and
  as many cards as its hand size says.  Nothing else of the hidden cards is
  read: the view has none.
- **Plays the round out** from each sample, once per candidate move (the same
  samples for every candidate, and the stock dealt to the seats in advance,
  so that their luck cancels out of the comparison), every seat with a quick
  greedy policy (:class:`~service.bots.playout.Playout`), and scores it as the
  points this seat is left with minus the mean of its opponents'.
- **Overrules ``strong`` only when sure.**  ``strong``'s move is the default;
  another candidate replaces it when its mean gain over the paired samples,
  less :data:`CONFIDENCE` standard errors, is still a gain (the best such).
  With a few dozen samples a round's luck is far larger than the difference
  between two moves, and choosing the best mean alone played worse than
  ``strong``.  The candidates: drawing from the stock or taking the top
  discard; ``strong``'s discard and the :data:`CANDIDATES` discards that leave
  the least deadwood.

Where playing out adds nothing it plays as ``strong``: a forced draw, going out
(0 points ends the round for the others), a final turn (only its own hand is
left to score), a stalemate's random discard.

**A budget in samples, not in time.**  Every random number comes from the
``rng`` the caller passes (a game's seeded turn generator), and the work per
decision is a number of samples, not a time: the same view, history and seed
give the same move on any machine, however loaded, so games replay.  A time
budget would make the move depend on the machine's speed.  The number of
samples is :data:`DEFAULT_SAMPLES` unless :func:`use_samples` sets another
(``BOT_EXPERT_SAMPLES``, read by the service at start).
"""

from __future__ import annotations

import math
import random
import statistics
from typing import Any

from service.bots import strong
from service.bots.common import Seen, stalemate_discard
from service.bots.playout import Playout, deal_hidden
from service.engine.moves import Move, Source

DEFAULT_SAMPLES = 32
"""Samples of the hidden cards per decision, each played out once per candidate."""
MAX_SAMPLES = 1000
CANDIDATES = 3
"""Discards played out besides ``strong``'s: those leaving the least deadwood."""
CONFIDENCE = 1.0
"""How sure the playouts must be to overrule ``strong``: a candidate replaces its
move only when its mean gain over the samples, less this many standard errors,
is still a gain."""

_samples = DEFAULT_SAMPLES


def use_samples(samples: int) -> None:
    """Set the samples per decision of this process's expert bots."""
    global _samples
    if not 1 <= samples <= MAX_SAMPLES:
        raise ValueError(f"samples must be between 1 and {MAX_SAMPLES}, got {samples}")
    _samples = samples


def samples() -> int:
    """The samples per decision now in use."""
    return _samples


def decide(
    view: dict[str, Any], rng: random.Random, history: list[dict[str, Any]] | None = None
) -> Move:
    return decide_with(view, rng, history, _samples)


def decide_with(
    view: dict[str, Any],
    rng: random.Random,
    history: list[dict[str, Any]] | None,
    sample_count: int,
) -> Move:
    """:func:`decide` with ``sample_count`` samples of the hidden cards."""
    seen = Seen.of(view)
    if len(seen.legal) == 1:
        return seen.legal[0]
    if seen.went_out is not None:  # a final turn: strong plays it as well as any
        return strong.decide(view, rng, history)
    playout = Playout(seen)
    candidates: list[Move]
    if seen.phase == "draw":
        forced = seen.forced_draw()
        if forced is not None:
            return forced
        stock, take = seen.draw(Source.STOCK), seen.draw(Source.DISCARD)
        assert stock is not None and take is not None
        candidates = [stock, take]
    else:
        if seen.go_outs():
            return strong.decide(view, rng, history)
        shaken = stalemate_discard(seen, rng)
        if shaken is not None:
            return shaken
        options = seen.discards()
        points = seen.ctx.points
        ranked = sorted(
            (dw, -points[c], c) for dw, c in playout.hands.discards(seen.hand) if c in options
        )
        candidates = [options[c] for _, _, c in ranked[:CANDIDATES]]
        if len(candidates) == 1:
            return candidates[0]
    anchor = strong.decide(view, rng, history)
    others = [m for m in candidates if m != anchor]
    tracker = strong.Tracker(seen, history)
    hand_sizes = [p["hand_size"] for p in view["players"]]
    worlds = [deal_hidden(seen, tracker, hand_sizes, rng) for _ in range(sample_count)]
    gains: list[list[float]] = [[] for _ in others]
    for world in worlds:
        base = playout.play(world, anchor)
        for i, move in enumerate(others):
            gains[i].append(playout.play(world, move) - base)
    best, best_mean = anchor, 0.0
    for move, diffs in zip(others, gains, strict=True):
        mean = statistics.fmean(diffs)
        spread = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
        if mean + CONFIDENCE * spread / math.sqrt(len(diffs)) < 0 and mean < best_mean:
            best, best_mean = move, mean
    return best
