"""Deadwood of many unrelated hands, fast: what the ``expert`` bot's playouts ask.

The memoized evaluator (:mod:`service.bots.evaluator`) shines on the hands of one
player, which repeat; a playout deals hands never seen before, and there a
search in C (the engine's own, :mod:`service.engine.solver.search`'s mode free)
is about ten times faster than a cold Python one.  :class:`QuickHands` asks it
directly with the costs the engine's solver gives it (a test holds the two to
the same answers) and remembers its answers for one decision only, so nothing
outlives the decision.  Where the C was not built, or a meld takes a limited
number of wilds (``max_wilds_per_meld``), it asks the evaluator instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.bots.evaluator import Context
from service.engine.cards import JOKER_ID
from service.engine.solver.switch import c_search

MAX_HAND = 32
"""The most cards the C search takes (its ``MAX_CARDS``); longer hands: the evaluator."""


class QuickHands:
    """Deadwood of hands (sorted card ids) under one round's rules, remembered."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.native = c_search(MAX_HAND) if ctx.limit is None else None
        self._deadwood: dict[tuple[int, ...], int] = {}
        self._discards: dict[tuple[int, ...], list[tuple[int, int]]] = {}

    def _split(self, hand: Sequence[int]) -> tuple[list[int], list[int]]:
        lo = self.ctx.wild_lo
        nat = [c for c in hand if c != JOKER_ID and not lo <= c < lo + 4]
        wild = [c for c in hand if c == JOKER_ID or lo <= c < lo + 4]
        return nat, wild

    def _costs(self, wild: Sequence[int]) -> tuple[list[int], bool]:
        """The search's cost of leaving the ``d`` cheapest wilds unmelded, for
        each ``d``, and whether a meld of wilds alone is allowed."""
        points = self.ctx.points
        cheap = [0]
        for cost in sorted(points[c] for c in wild):
            cheap.append(cheap[-1] + cost)
        lo = self.ctx.wild_lo
        all_wild = self.ctx.all_wild or any(lo <= c < lo + 4 for c in wild)
        return cheap, all_wild

    def deadwood(self, hand: tuple[int, ...]) -> int:
        """Points left in the best arrangement of ``hand``."""
        found = self._deadwood.get(hand)
        if found is not None:
            return found
        native = self.native
        if native is None or len(hand) > MAX_HAND:
            found = self.ctx.deadwood(hand)
        else:
            nat, wild = self._split(hand)
            cheap, all_wild = self._costs(wild)
            found = native.solve_free(
                nat, len(wild), self.ctx.points, cheap, all_wild, self.ctx.aces_high
            )[0]
        self._deadwood[hand] = found
        return found

    def discards(self, hand: tuple[int, ...]) -> list[tuple[int, int]]:
        """``(deadwood after discarding it, card)`` for each distinct card of ``hand``."""
        found = self._discards.get(hand)
        if found is not None:
            return found
        native = self.native
        if native is None or len(hand) > MAX_HAND:
            found = self.ctx.best_discards(hand)
        else:
            nat, wild = self._split(hand)
            cheap, all_wild = self._costs(wild)
            drops = sorted(set(nat))
            high = self.ctx.aces_high
            points = self.ctx.points
            found = []
            if drops:
                each = native.solve_free_each(nat, len(wild), points, cheap, all_wild, high, drops)
                found = [(res[0], d) for d, res in zip(drops, each, strict=True)]
            for w in sorted(set(wild)):
                rest = list(wild)
                rest.remove(w)
                cheap_w, all_wild_w = self._costs(rest)
                value = native.solve_free(nat, len(rest), points, cheap_w, all_wild_w, high)[0]
                found.append((value, w))
        self._discards[hand] = found
        return found

    def after_discard(self, hand: tuple[int, ...]) -> int:
        """The least deadwood left after discarding one card of ``hand``."""
        return min(d for d, _ in self.discards(hand))
