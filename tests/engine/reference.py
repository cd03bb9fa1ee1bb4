"""A brute-force reference solver, deliberately simple and independent of the
engine's solver: it tries every role of every wild-rank card and every
position of every card in a run, and every partition of a small hand."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import combinations, product

from service.engine import Aces, Card, Meld, MeldKind, Options, Rank, card_points


def _roles(cards: Sequence[Card], wild_rank: Rank) -> list[list[bool]]:
    """Every assignment of 'plays as wild' to the cards (jokers always wild)."""
    choices = [
        (True,) if c.is_joker else ((False, True) if c.rank == wild_rank else (False,))
        for c in cards
    ]
    return [list(p) for p in product(*choices)]


def _ok_count(wild: list[bool], options: Options) -> bool:
    n_wild = sum(wild)
    if n_wild == len(wild) and not options.all_wild_melds:
        return False
    return options.max_wilds_per_meld is None or n_wild <= options.max_wilds_per_meld


def ref_is_set(cards: Sequence[Card], wild_rank: Rank, options: Options, extra: int = 0) -> bool:
    if len(cards) < 3:
        return False
    relaxed = _relax(options, extra)
    for wild in _roles(cards, wild_rank):
        ranks = {c.rank for c, w in zip(cards, wild, strict=True) if not w}
        if len(ranks) <= 1 and _ok_count(wild, relaxed):
            return True
    return False


def ref_is_run(cards: Sequence[Card], wild_rank: Rank, options: Options, extra: int = 0) -> bool:
    n = len(cards)
    if n < 3 or n > 13:
        return False
    relaxed = _relax(options, extra)
    tops = [13, 14] if options.aces is Aces.HIGH_OR_LOW else [13]
    for wild in _roles(cards, wild_rank):
        if not _ok_count(wild, relaxed):
            continue
        selfs = [c for c, w in zip(cards, wild, strict=True) if not w]
        if len({c.suit for c in selfs}) > 1:
            continue
        for top in tops:
            for lo in range(top - 12, top - n + 2):
                positions = range(lo, lo + n)
                taken = set()
                good = True
                for c in selfs:
                    assert c.rank is not None
                    p = 14 if (c.rank == 1 and top == 14) else int(c.rank)
                    if p not in positions or p in taken:
                        good = False
                        break
                    taken.add(p)
                if good:
                    return True
    return False


def _relax(options: Options, extra: int) -> Options:
    if options.max_wilds_per_meld is None or extra == 0:
        return options
    import dataclasses

    return dataclasses.replace(options, max_wilds_per_meld=options.max_wilds_per_meld + extra)


def ref_valid(cards: Sequence[Card], wild_rank: Rank, options: Options) -> bool:
    return ref_is_set(cards, wild_rank, options) or ref_is_run(cards, wild_rank, options)


def ref_extend_ok(meld: Meld, cards: Sequence[Card], wild_rank: Rank, options: Options) -> bool:
    """meld + cards valid with the kind kept; laid-off jokers are free riders or
    gap fillers outside max_wilds_per_meld -- the new ones, and as many of the
    meld's own jokers as it needs to be valid (the fewest)."""
    if not cards:
        return False
    check = ref_is_set if meld.kind is MeldKind.SET else ref_is_run

    def ok(fixed: Sequence[Card], laid: Sequence[Card]) -> bool:
        # each laid-off joker is placed (with its licence) or rides (left out)
        return any(check([*fixed, *laid[:k]], wild_rank, options, k) for k in range(len(laid) + 1))

    own = [c for c in meld.cards if not c.is_joker]
    own_jokers = [c for c in meld.cards if c.is_joker]
    laid = next(
        (r for r in range(len(own_jokers) + 1) if ok(own + own_jokers[r:], own_jokers[:r])), 0
    )
    rest = [c for c in cards if not c.is_joker]
    jokers = [c for c in cards if c.is_joker]
    return ok(own + own_jokers[laid:] + rest, own_jokers[:laid] + jokers)


def ref_best_points(
    cards: Sequence[Card], wild_rank: Rank, options: Options, table: Sequence[Meld] = ()
) -> int:
    """Minimal deadwood points by exhaustive search (small hands only)."""
    ids = tuple(sorted(c.id for c in cards))

    @cache
    def valid(group: tuple[int, ...]) -> bool:
        return ref_valid([Card.from_id(i) for i in group], wild_rank, options)

    @cache
    def meldable(rest: tuple[int, ...]) -> bool:
        """Whether ``rest`` splits into valid melds."""
        if not rest:
            return True
        first, others = rest[0], rest[1:]
        for k in range(2, len(others) + 1):
            for idx in combinations(range(len(others)), k):
                group = (first, *(others[j] for j in idx))
                left = tuple(x for j, x in enumerate(others) if j not in idx)
                if valid(group) and meldable(left):
                    return True
        return False

    def pts(i: int) -> int:
        return card_points(Card.from_id(i), wild_rank, options)

    best = 1 << 30
    # each card: 0 = own melds / deadwood, 1 + t = laid off onto table[t]
    n = len(ids)
    for dest in product(range(len(table) + 1), repeat=n):
        lay: list[list[Card]] = [[] for _ in table]
        for i, d in zip(ids, dest, strict=True):
            if d:
                lay[d - 1].append(Card.from_id(i))
        if any(
            cs and not ref_extend_ok(table[t], cs, wild_rank, options) for t, cs in enumerate(lay)
        ):
            continue
        own = [i for i, d in zip(ids, dest, strict=True) if d == 0]
        for mask in range(1 << len(own)):
            melded = tuple(own[j] for j in range(len(own)) if mask >> j & 1)
            dead = sum(pts(own[j]) for j in range(len(own)) if not mask >> j & 1)
            if dead < best and meldable(melded):
                best = dead
    return best
