"""What each table run can take from a hand: the picks the lay-off search of
:mod:`service.engine.solver.table` combines, in the order of the plain search
it replaced."""

from __future__ import annotations

from collections import Counter
from itertools import combinations, product

from service.engine.cards import JOKER, Card, Rank
from service.engine.melds import Meld, extend_meld
from service.engine.options import Aces, Options
from service.engine.solver.work_budget import Budget


def run_picks(
    hand: Counter[Card], meld: Meld, wild_rank: Rank, options: Options, budget: Budget
) -> list[Counter[Card]]:
    """Every pick of cards of ``hand`` that the run ``meld`` takes on its own, in
    the plain search's order (naturals by subsets, then wild-rank cards, then
    jokers).  A run takes at most one card of each natural code; wild-rank
    cards and jokers are interchangeable as wilds, so only their number is
    chosen (with ``max_wilds_per_meld`` also which wild-rank card, as it may
    play as itself).

    Three shortcuts leave the list as it was: a natural of a rank the run holds
    as a natural never fits; naturals whose span the run's cards and every wild
    cannot cover do not fit; and a laid-off joker always fits once the rest
    does (it rides on the meld), so past the first number of jokers that fits
    every larger one does.
    """
    one = options.max_wilds_per_meld is not None
    suit = next((c.id & 3 for c in meld.cards if not c.is_joker and c.rank != wild_rank), None)
    held = {c.id >> 2 for c in meld.cards if not c.is_joker and c.rank != wild_rank}
    found: list[Counter[Card]] = [Counter()]
    nat = sorted(
        c
        for c in hand
        if not c.is_joker
        and c.rank != wild_rank
        and (suit is None or c.id & 3 == suit)
        and c.id >> 2 not in held
    )
    wrs = sorted(c for c in hand if c.rank == wild_rank)
    n_jk = hand[JOKER]
    room = 13 - len(meld.cards)
    pool = [c for c in wrs for _ in range(hand[c])]
    wild_picks: list[list[Card]]
    if one:  # one wild-rank card as itself, one as the wild: at most two
        wild_picks = [[]] + [[c] for c in wrs]
        wild_picks += [list(p) for p in sorted(set(combinations(pool, 2)))]
    else:
        wild_picks = [pool[:k] for k in range(min(len(pool), room) + 1)]
    stand_in = [JOKER] * (n_jk + len(pool))
    span_ok = _Span(held, len(meld.cards) + len(stand_in), options.aces is Aces.HIGH_OR_LOW)
    budget.spend(1 << len(nat))
    for counts in product(*((0, 1) for _ in nat)):
        naturals = [c for c, k in zip(nat, counts, strict=True) if k]
        if naturals:
            if not span_ok(naturals):
                continue
            # jokers are the most welcome cards: if these naturals do not
            # fit even with every wild standing in as a joker, skip them
            budget.spend(1)
            if extend_meld(meld, naturals + stand_in, wild_rank, options) is None:
                continue
        for wild in wild_picks:
            for j in range(n_jk + 1):
                picked = naturals + wild + [JOKER] * j
                if not picked:
                    continue
                budget.spend(1)
                if extend_meld(meld, picked, wild_rank, options) is not None:
                    found += [Counter(picked + [JOKER] * more) for more in range(n_jk - j + 1)]
                    break
    return found


class _Span:
    """A test that naturals (ranks new to the run) could fit it with every wild:
    one suit, and the run's natural ranks and theirs span at most as many
    places as there would be cards (and 13); no shortcut when aces may be high."""

    __slots__ = ("held", "cards", "off")

    def __init__(self, held: set[int], cards: int, off: bool) -> None:
        self.held = held
        self.cards = cards
        self.off = off  # aces may be high: no shortcut

    def __call__(self, naturals: list[Card]) -> bool:
        if self.off:
            return True
        if len({c.id & 3 for c in naturals}) > 1:
            return False
        rs = [c.id >> 2 for c in naturals]
        lo = min(min(rs), min(self.held, default=13))
        hi = max(max(rs), max(self.held, default=-1))
        return hi - lo + 1 <= min(13, self.cards + len(naturals))
