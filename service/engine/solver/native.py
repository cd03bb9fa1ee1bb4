"""Whole hands in C: in mode free without table melds, the C extension
prepares a hand, searches it and places its wilds as
:func:`~service.engine.solver.hand.solve_hand` and
:func:`~service.engine.solver.plan.assembled` do, card for card; only the
melds' classification stays here.  Used where
:mod:`service.engine.solver.switch` says so."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import count
from types import ModuleType

from service.engine.cards import Card, Rank
from service.engine.melds import Arrangement, Meld
from service.engine.options import Aces, Options
from service.engine.rules import points_table
from service.engine.solver.plan import meld_of
from service.engine.solver.switch import c_hands

Groups = tuple[tuple[int, ...], ...]
"""The C's plan in cards: each meld's card ids, ascending."""


def c_rules(wild_rank: Rank, options: Options, n_cards: int) -> CRules | None:
    """What solves a hand of ``n_cards`` without table melds all in C, or None
    where the Python does it (:func:`~service.engine.solver.switch.c_hands`
    decides): the per-rules constants are made once, looked up by the very
    ``options`` object (options are interned: codec.py), so that no call
    hashes or compares an :class:`Options`."""
    native = c_hands(n_cards, options)
    if native is None:
        return None
    key = (id(options), wild_rank)
    hit = _RULES.get(key)
    if hit is None or hit[0] is not options:
        if len(_RULES) >= 512:
            _RULES.clear()
        hit = _RULES[key] = (options, CRules(native, wild_rank, options))  # options: its id stays
    return hit[1]


class CRules:
    """A hand's arrangement and going-out checks done in C, mode free, no table:
    the C's ``arrange_free`` and ``go_out_free`` find the plans that
    :func:`~service.engine.solver.hand.solve_hand` finds and place the wilds
    as :func:`~service.engine.solver.plan.assembled` does, card for card; the
    groups of ids become melds here (through
    :func:`~service.engine.solver.plan.meld_of`, with a dict in front of it
    keyed by the ids and these rules' token, which hashes in C, unlike an
    :class:`Options`)."""

    __slots__ = ("native", "args", "token", "wild_rank", "options")

    def __init__(self, native: ModuleType, wild_rank: Rank, options: Options) -> None:
        self.native = native
        pts = array("q", points_table(wild_rank, options)).tobytes()  # what the C reads
        high = options.aces is Aces.HIGH_OR_LOW
        self.args = (pts, (wild_rank - 1) * 4, options.all_wild_melds, high)
        self.token = next(_TOKENS)
        self.wild_rank = wild_rank
        self.options = options

    def arrangement(self, ids: Sequence[int]) -> Arrangement:
        """The arrangement of the hand of these card ids (as
        :func:`~service.engine.solver.hand.solve_hand` then
        :func:`~service.engine.solver.plan.finish` make it)."""
        groups, deadwood, points = self.native.arrange_free(ids, *self.args, False)
        return Arrangement(
            self.melds_of(groups), tuple([Card.from_id(i) for i in deadwood]), points
        )

    def melded(self, ids: Sequence[int]) -> tuple[Meld, ...] | None:
        """The melds of ``solve_hand(..., must_meld=True)`` on these ids, or None."""
        found = self.native.arrange_free(ids, *self.args, True)
        return None if found is None else self.melds_of(found[0])

    def going_out(
        self, ids: Sequence[int], candidates: Sequence[Card]
    ) -> list[tuple[Card, tuple[Meld, ...]]]:
        """What :func:`~service.engine.solver.hand.going_out_plans` finds, its
        plans as melds."""
        if not candidates:  # (the first draws of a round, mostly: no card is worth the floor)
            return []
        found = self.native.go_out_free(ids, *self.args, [c.id for c in candidates])
        return [
            (Card.from_id(c.id), self.melds_of(groups))
            for c, groups in zip(candidates, found, strict=True)
            if groups is not None
        ]

    def melds_of(self, groups: Groups) -> tuple[Meld, ...]:
        """The melds of the C's groups, as
        :func:`~service.engine.solver.plan.melds_of` makes them."""
        token = self.token
        return tuple([_MELDS.get((ids, token)) or self._new_meld(ids) for ids in groups])

    def _new_meld(self, ids: tuple[int, ...]) -> Meld:
        if len(_MELDS) >= _MELDS_KEPT:
            _MELDS.clear()
        meld = _MELDS[ids, self.token] = meld_of(ids, self.wild_rank, self.options)
        return meld


_RULES: dict[tuple[int, Rank], tuple[Options, CRules]] = {}
_TOKENS = count()
_MELDS: dict[tuple[tuple[int, ...], int], Meld] = {}
_MELDS_KEPT = 8192  # as many as meld_of's own memo
