"""A fast, memoized hand evaluator for the bots.

The engine's solver (:mod:`service.engine.solver`) is the authority on scoring;
bots only need to compare many candidate hands quickly, so they use this
evaluator, which shares a memo table between every hand evaluated under the
same rules and wild rank.  It treats every wild-rank card and joker as a wild
(a wild-rank card playing as itself is covered: a wild can stand for it), which
is exact for the classic rules and a close approximation under the variants.
Bots never submit melds of their own: they only ever pick from the view's
``legal_moves``, so an approximation here can cost strength, never legality.

>>> from service.engine.cards import parse_cards
>>> from service.engine.rules import Options
>>> ctx = Context.get("7", Options())
>>> ctx.deadwood(ids(parse_cards("4H 5H 6H 9C 9D 7S KD")))
10
>>> ctx.after_discard(ids(parse_cards("4H 5H 6H 9C 9D 7S KD")))
0
>>> ctx.deadwood(ids(parse_cards("2C 2D 8S 9S JH QH KH")))
21
>>> ctx.deadwood(ids(parse_cards("7C 7D AS 5H"))), ctx.deadwood(ids(parse_cards("7C AS 5H")))
(1, 13)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from cachetools import LRUCache

from service.engine.byte_cache import DICT_SLOT, ClearingMemo, tuple_bytes
from service.engine.cards import JOKER_ID, Card, Rank
from service.engine.options import Aces, Options
from service.engine.rules import points_table
from service.engine.solver import best_arrangement

INF = 10**6

SEARCHES = ClearingMemo("evaluator.searches", 0.5)
"""The recursion's memo, of every context: ``(context, naturals, wilds,
melded, need)`` -> deadwood.  Each entry weighs its key's tuples, a dict slot
and (past the small ints) its value (:func:`_search_bytes`)."""
HANDS = ClearingMemo("evaluator.hands", 0.2)
"""Whole hands, of every context: ``(context, hand, discard)`` -> deadwood."""

_KEY5 = tuple_bytes(5)
_KEY3 = tuple_bytes(3)
_BIG_INT = 32  # an int past the interpreter's small ones (deadwood of INF)
_numbers = itertools.count(1000)  # never a small int: each context keeps its own


_SEARCH_ENTRY = _KEY5 + tuple_bytes(0) + DICT_SLOT
"""Bytes of one entry of :data:`SEARCHES`, before 8 a natural and the wilds'
tuple (counted as its own, though a slice of the whole tuple is often the
tuple itself): written out in :meth:`Context._rec`, the innermost loop.

>>> from service.engine.byte_cache import tuple_bytes
>>> _SEARCH_ENTRY + 8 * 5 + (tuple_bytes(0) + 8 * 2) == (
...     _KEY5 + tuple_bytes(5) + tuple_bytes(2) + DICT_SLOT)
True
"""
_WILDS_TUPLE = tuple_bytes(0)


def _hand_bytes(n_cards: int, value: int) -> int:
    """Bytes of one entry of :data:`HANDS`."""
    return _KEY3 + tuple_bytes(n_cards) + DICT_SLOT + (_BIG_INT if value > 256 else 0)


def ids(cards: Iterable[Card]) -> tuple[int, ...]:
    """Sorted card ids of ``cards``."""
    return tuple(sorted(c.id for c in cards))


def codes_to_ids(codes: Iterable[str]) -> tuple[int, ...]:
    """Sorted card ids of card codes."""
    return tuple(sorted(Card.parse(c).id for c in codes))


def scoring(options: Options) -> Options:
    """The options an evaluation depends on (the rest, the decks or the number of
    rounds, change no hand's deadwood): the key of a :class:`Context`, so that
    games differing only in the others share one.

    >>> from service.engine.options import preset
    >>> scoring(Options(extra_rounds=2, decks=3)) == scoring(Options())
    True
    >>> scoring(preset("finnish")) == scoring(Options())
    False
    """
    return Options(
        aces=options.aces,
        face_card_points=options.face_card_points,
        unused_wild_points=options.unused_wild_points,
        max_wilds_per_meld=options.max_wilds_per_meld,
        all_wild_melds=options.all_wild_melds,
    )


class Context:
    """Rules and wild rank of one round; its evaluations are memoized in
    :data:`SEARCHES` and :data:`HANDS`, keyed by the context's number."""

    _cache: LRUCache[tuple[Rank, Options], Context] = LRUCache(64)
    """The contexts in use (a few hundred bytes each: the memos are apart)."""

    def __init__(self, wild_rank: Rank, options: Options) -> None:
        self.number = next(_numbers)
        self.wild_rank = wild_rank
        self.options = scoring(options)
        self.points = points_table(wild_rank, options)
        self.wild_lo = (int(wild_rank) - 1) * 4
        self.limit = options.max_wilds_per_meld
        self.aces_high = options.aces is Aces.HIGH_OR_LOW
        self.all_wild = options.all_wild_melds

    @classmethod
    def get(cls, wild_rank: Rank | str, options: Options) -> Context:
        """The shared context for these rules (cached)."""
        rank = wild_rank if isinstance(wild_rank, Rank) else Rank.parse(wild_rank)
        key = (rank, scoring(options))
        ctx = cls._cache.get(key)
        if ctx is None:
            ctx = cls._cache[key] = cls(rank, key[1])
        return ctx

    def is_wild(self, card_id: int) -> bool:
        return card_id == JOKER_ID or self.wild_lo <= card_id < self.wild_lo + 4

    # -- public -------------------------------------------------------------

    def deadwood(self, hand: Sequence[int]) -> int:
        """Penalty points of the best arrangement of ``hand`` (sorted ids)."""
        if self.limit is not None:
            return self._exact(tuple(hand))
        return self._eval(tuple(hand), False)

    def after_discard(self, hand: Sequence[int]) -> int:
        """The smallest deadwood left after discarding one card of ``hand``."""
        if self.limit is not None:
            return min(d for d, _ in self.best_discards(hand))
        return self._eval(tuple(hand), True)

    def _exact(self, hand: tuple[int, ...]) -> int:
        # With a wild limit a wild-rank card playing as itself matters: ask the engine.
        key = (self.number, hand, None)
        found: int | None = HANDS.data.get(key)
        if found is None:
            cards = [Card.from_id(c) for c in hand]
            found = best_arrangement(cards, self.wild_rank, self.options).points
            HANDS.add(key, found, _hand_bytes(len(hand), found))
        return found

    def best_discards(self, hand: Sequence[int]) -> list[tuple[int, int]]:
        """``(deadwood after discarding it, card id)`` for each distinct card."""
        cards = tuple(hand)
        out = []
        seen = set()
        for i, c in enumerate(cards):
            if c in seen:
                continue
            seen.add(c)
            out.append((self.deadwood(cards[:i] + cards[i + 1 :]), c))
        return out

    # -- search -------------------------------------------------------------

    def _eval(self, hand: tuple[int, ...], discard: bool) -> int:
        key = (self.number, hand, discard)
        found: int | None = HANDS.data.get(key)
        if found is not None:
            return found
        nats = tuple(c for c in hand if not self.is_wild(c))
        wilds = tuple(sorted((self.points[c] for c in hand if self.is_wild(c)), reverse=True))
        value = self._rec(nats, wilds, False, discard)
        if discard and wilds:
            value = min(value, self._rec(nats, wilds[1:], False, False))
        HANDS.add(key, value, _hand_bytes(len(hand), value))
        return value

    def _leftover(self, wilds: tuple[int, ...], melded: bool, need: bool) -> int:
        if need:
            if not wilds:
                return INF
            wilds = wilds[1:]
        if not wilds:
            return 0
        if melded and self.limit is None:
            return 0
        if len(wilds) >= 3 and (self.all_wild or any(w != 20 for w in wilds)):
            return 0
        return sum(wilds)

    def _rec(self, nats: tuple[int, ...], wilds: tuple[int, ...], melded: bool, need: bool) -> int:
        if not nats:
            return self._leftover(wilds, melded, need)
        key = (self.number, nats, wilds, melded, need)
        found: int | None = SEARCHES.data.get(key)
        if found is not None:
            return found
        c = nats[0]
        rest = nats[1:]
        rec = self._rec
        best = self.points[c] + rec(rest, wilds, melded, need)
        if need:
            best = min(best, rec(rest, wilds, melded, False))
        nw = len(wilds)
        cap = nw if self.limit is None else min(nw, self.limit)
        # sets: c plus some of the same-rank cards that follow it
        rank = c >> 2
        m = 0
        while m < len(rest) and rest[m] >> 2 == rank:
            m += 1
        if m or cap:
            same = rest[:m]
            tail = rest[m:]
            seen: set[tuple[int, ...]] = set()
            for mask in range(1 << m):
                chosen = tuple(same[i] for i in range(m) if mask >> i & 1)
                if chosen in seen:
                    continue
                seen.add(chosen)
                need_w = max(0, 2 - len(chosen))
                if need_w > cap:
                    continue
                left = tuple(same[i] for i in range(m) if not mask >> i & 1)
                v = rec(left + tail, wilds[need_w:], True, need)
                if v < best:
                    best = v
        # runs in c's suit with c as the lowest natural (and high-ace runs)
        suit = c & 3
        starts = [(rank, 1)]
        if self.aces_high and rank == 0:
            starts.append((13, -1))
        for start, step in starts:
            stack: list[tuple[int, tuple[int, ...], int, int]] = [(start, rest, 0, 1)]
            while stack:
                pos, remaining, used, span = stack.pop()
                nxt = pos + step
                if nxt < (0 if step > 0 else 1) or nxt > 12 or span >= 13:
                    continue
                cid = nxt * 4 + suit
                if cid in remaining:
                    i = remaining.index(cid)
                    rem2 = remaining[:i] + remaining[i + 1 :]
                    span2 = span + 1
                    pad = max(0, 3 - span2)
                    if used + pad <= cap:
                        v = rec(rem2, wilds[used + pad :], True, need)
                        if v < best:
                            best = v
                    stack.append((nxt, rem2, used, span2))
                if used + 1 <= cap:
                    stack.append((nxt, remaining, used + 1, span + 1))
        size = _SEARCH_ENTRY + 8 * len(nats)
        if nw:
            size += _WILDS_TUPLE + 8 * nw
        if best > 256:
            size += _BIG_INT
        SEARCHES.add(key, best, size)
        return best
