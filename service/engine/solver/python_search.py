"""The hand solver's search, in Python: the reference that the C extension
(``_native.c``) ports state for state, and what runs where the C does
not (see :mod:`service.engine.solver.switch`); :mod:`service.engine.solver.search`
is its entry.

Natural cards are a multiset packed into one int, four bits per card id
(``count << 4 * id``), so "the lowest remaining card" is a bit trick and a
memo key is one int.  The search picks the lowest remaining natural card and
branches: deadwood, a set with other cards of its rank, or a run upwards from
it (or, for an ace with ``aces=high_or_low``, a run down from the ace high);
gaps are paid with wilds.  Wilds are counted, never placed, until the end.

A run may pass over a natural card it could hold (a wild takes that place)
while wilds last, so every run is tried, not only the greedy ones.  Spare
wilds are dumped at the end into melds with room (``cap`` counts it).

Mode ``free`` (``max_wilds_per_meld`` null): wild-rank cards are plain wilds
(a wild-rank card playing as itself in a meld with natural cards is the same
as playing as a wild); a group of leftover wilds is a meld (a set of the wild
rank) when it holds a wild-rank card or ``all_wild_melds`` is on.

Mode ``one`` (``max_wilds_per_meld`` 1): wild-rank cards are natural cards
that may instead be *designated* wild; the wild balance may go negative while
enough wild-rank cards remain to designate.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from service.engine.byte_cache import DICT_SLOT, ClearingMemo, footprint

INF = 1 << 30
# A plan step: (natural ids of the meld, wilds it needs, "set" or "run"),
# or ("designate", id) in mode one.
Step = tuple[tuple[int, ...], int, str]


def pack(ids: Sequence[int]) -> int:
    """The multiset of card ids as an int, four bits a card id.

    >>> hex(pack([0, 0, 5]))
    '0x100002'
    >>> unpack(pack([5, 0, 51, 0]))
    [0, 0, 5, 51]
    """
    x = 0
    for i in ids:
        x += 1 << (i << 2)
    return x


def unpack(x: int) -> list[int]:
    out: list[int] = []
    while x:
        i = ((x & -x).bit_length() - 1) >> 2
        n = (x >> (i << 2)) & 15
        out += [i] * n
        x -= n << (i << 2)
    return out


LeafCosts = tuple[int, int, int, int]
"""Mode one: what leftover wilds cost -- (jokers in the hand, cost of a joker,
table sets that take a wild-rank card for free, cost of a wild-rank card)."""


class Result:
    """Optimum value, the melds of one optimal plan and the leftover wilds."""

    __slots__ = ("value", "melds", "designated", "leftover", "cap", "wr_shift")

    def __init__(self) -> None:
        self.value = 0
        self.melds: list[Step] = []
        self.designated: list[int] = []
        self.leftover = 0
        self.cap = 0
        self.wr_shift = 0


_SETS = ClearingMemo("solver.sets", 0.01)
"""The search's own memos (sets of a rank, here, and runs of a suit,
:data:`_WALKS`): they only depend on the cards of one rank or suit, so they are
shared by every solve; each is emptied past its share of the bots' budget
(:mod:`service.engine.byte_cache`)."""


def _set_options(rest: int, base: int) -> list[tuple[int, int]]:
    """(removed mask, size) of every sub-multiset of rank ``base >> 2`` in ``rest``.

    Memoized by the rank and its cards: the search asks again and again."""
    shift = base << 2
    pattern = (rest >> shift) & 0xFFFF
    memo_key = (base << 16) | pattern
    subs: list[tuple[int, int]] | None = _SETS.data.get(memo_key)
    if subs is None:
        counts = [(pattern >> (k << 2)) & 15 for k in range(4)]
        subs = []
        for t in product(*(range(c + 1) for c in counts)):
            subs.append((sum(n << (k << 2) for k, n in enumerate(t)) << shift, sum(t)))
        subs.sort(key=lambda x: -x[1])
        _SETS.add(memo_key, subs, DICT_SLOT + footprint(memo_key) + footprint(subs))
    return subs


SUIT_MASK = sum(0xF << (k << 4) for k in range(13))
"""The count nibbles of one suit (of suit 0; shift by ``4 * suit``) in a packed multiset."""

Walk = tuple[int, int, int, tuple[int, ...]]
_WALKS = ClearingMemo("solver.walks", 0.04)


def _walks(rest: int, i: int, high: bool, max_gaps: int, skip: bool) -> list[Walk]:
    """:func:`_find_walks`, memoized by the cards of ``i``'s suit in ``rest``
    (nothing else decides the runs)."""
    memo_key = (rest & (SUIT_MASK << ((i & 3) << 2)), i, high, max_gaps, skip)
    found: list[Walk] | None = _WALKS.data.get(memo_key)
    if found is None:
        found = _find_walks(rest, i, high, max_gaps, skip)
        _WALKS.add(memo_key, found, DICT_SLOT + footprint(memo_key) + footprint(found))
    return found


def _find_walks(rest: int, i: int, high: bool, max_gaps: int, skip: bool) -> list[Walk]:
    """Runs from card ``i`` up (or, ``high``, from the ace high down).

    Yields (removed mask, span, gaps, natural ids other than ``i``) for every
    run whose last natural card ends the walk, span >= 2.
    """
    s = i & 3
    if high:
        start, step, stop = 13, -1, 1
    else:
        start, step, stop = (i >> 2) + 2, 1, 14
    out: list[Walk] = []
    empty: tuple[int, ...] = ()
    stack = [(start, 0, 0, empty)]  # next position, removed mask, gaps, ids
    anchor = 14 if high else (i >> 2) + 1
    while stack:
        q, mask, gaps, ids = stack.pop()
        while q != stop:
            cid = ((q - 1) << 2) | s
            if (rest - mask) >> (cid << 2) & 15:
                if skip and gaps < max_gaps:
                    stack.append((q + step, mask, gaps + 1, ids))
                mask += 1 << (cid << 2)
                ids = (*ids, cid)
                out.append((mask, abs(q - anchor) + 1, gaps, ids))
            else:
                gaps += 1
                if gaps > max_gaps:
                    break
            q += step
    return out


NOSET, NODEAD = 1, 2
# Flags about the rank of the lowest remaining card, from choices made for
# its cards before (both are "without loss of generality" rules): a natural
# card left in deadwood could join a set of its rank, so after one there is
# no such set (NOSET); once a set holds one, no card of that rank is deadwood
# (NODEAD).  In mode free two sets of one rank merge, so a set also sets NOSET.
Memo = dict[int, tuple[int, tuple[int, int, int, int] | None, Step | None]]


def _key(rem: int, wl: int, cap: int, flag: int) -> int:
    return (rem << 16) | (flag << 14) | ((wl + 32) << 7) | cap


def _trace(res: Result, memo: Memo, state: tuple[int, int, int, int], one: bool) -> None:
    rem, wl, cap, flag = state
    while True:
        cap = min(cap, _most(rem, wl, res.wr_shift) if one else wl)
        hit = memo.get(_key(rem, wl, cap, flag))
        if hit is None or hit[1] is None:
            break
        step = hit[2]
        if step is not None:
            if step[2] == "designate":
                res.designated.append(step[0][0])
            else:
                res.melds.append(step)
        rem, wl, cap, flag = hit[1]
    res.leftover, res.cap = wl, cap


def _most(rem: int, wl: int, wr_shift: int) -> int:
    """The most wilds there can be: ``wl`` plus the wild-rank cards left."""
    w = (rem >> wr_shift) & 0xFFFF
    return wl + (w & 15) + (w >> 4 & 15) + (w >> 8 & 15) + (w >> 12)


def leaf_cost(leaf: LeafCosts, wl: int, cap: int) -> int:
    """Mode one: the cost of ``wl`` leftover wilds when melds have room for ``cap``."""
    d = wl - cap
    if d <= 0:
        return 0
    jokers, joker_cost, slots, wr_cost = leaf
    return min(INF, min(d, jokers) * joker_cost + max(0, d - jokers - slots) * wr_cost)


def search_free(
    rem0: int,
    wilds: int,
    pts: Sequence[int],
    cheap: Sequence[int],
    allwild_ok: bool,
    high: bool,
) -> Result:
    """Mode free over the packed natural cards ``rem0`` (see
    :func:`service.engine.solver.search.solve_free`)."""
    capmax = wilds
    memo: Memo = {}

    def f(rem: int, wl: int, cap: int, flag: int) -> int:
        if cap > wl:
            cap = wl
        key = (rem << 16) | (flag << 14) | ((wl + 32) << 7) | cap
        hit = memo.get(key)
        if hit is not None:
            return hit[0]
        if rem == 0:
            if wl == 0 or (wl >= 3 and allwild_ok) or wl <= cap:
                v = 0
            else:
                v = cheap[wl - cap]
            memo[key] = (v, None, None)
            return v
        i = ((rem & -rem).bit_length() - 1) >> 2
        r = i >> 2
        rest = rem - (1 << (i << 2))
        best = INF
        arg: tuple[tuple[int, int, int, int] | None, Step | None] = (None, None)
        if not flag & NOSET:
            nflag = NOSET | NODEAD
            for mask, size in _set_options(rest, i & ~3):
                need = 2 - size if size < 2 else 0
                if need <= wl:
                    nrem = rest - mask
                    fl = nflag if ((nrem & -nrem).bit_length() - 1) >> 4 == r else 0
                    v = f(nrem, wl - need, capmax, fl)
                    if v < best:
                        best = v
                        arg = ((nrem, wl - need, capmax, fl), ((i, *unpack(mask)), need, "set"))
                        if v == 0:
                            memo[key] = (0, *arg)
                            return 0
        for hi in (False, True) if (high and i < 4) else (False,):
            for mask, span, gaps, ids in _walks(rest, i, hi, wl, True):
                pad = 3 - span if span < 3 else 0
                need = gaps + pad
                if need > wl:
                    continue
                ncap = cap + 13 - span - pad
                if ncap > capmax:
                    ncap = capmax
                nrem = rest - mask
                fl = flag if ((nrem & -nrem).bit_length() - 1) >> 4 == r else 0
                v = f(nrem, wl - need, ncap, fl)
                if v < best:
                    best = v
                    arg = ((nrem, wl - need, ncap, fl), ((i, *ids), need, "run"))
                    if v == 0:
                        memo[key] = (0, *arg)
                        return 0
        if not flag & NODEAD and pts[i] < best:
            fl = flag | NOSET if ((rest & -rest).bit_length() - 1) >> 4 == r else 0
            v = pts[i] + f(rest, wl, cap, fl)
            if v < best:
                best = v
                arg = ((rest, wl, cap, fl), None)
        memo[key] = (best, *arg)
        return best

    res = Result()
    res.value = f(rem0, wilds, 0, 0)
    if res.value < INF:
        _trace(res, memo, (rem0, wilds, 0, 0), False)
    memo.clear()  # f refers to itself, so only the cyclic GC frees it: not its memo
    return res


def search_one(
    rem0: int, jokers: int, wr_base: int, pts: Sequence[int], leaf: LeafCosts, high: bool
) -> Result:
    """Mode one over the packed natural cards ``rem0`` (see
    :func:`service.engine.solver.search.solve_one`)."""
    wr_shift = wr_base << 2
    capmax = jokers + sum((rem0 >> ((wr_base + k) << 2)) & 15 for k in range(4))
    memo: Memo = {}

    def f(rem: int, wl: int, cap: int, flag: int) -> int:
        w = (rem >> wr_shift) & 0xFFFF
        most = wl + (w & 15) + (w >> 4 & 15) + (w >> 8 & 15) + (w >> 12)
        if most < 0:
            return INF
        if cap > most:
            cap = most
        key = (rem << 16) | (flag << 14) | ((wl + 32) << 7) | cap
        hit = memo.get(key)
        if hit is not None:
            return hit[0]
        if rem == 0:
            v = INF if wl < 0 else leaf_cost(leaf, wl, cap)
            memo[key] = (v, None, None)
            return v
        i = ((rem & -rem).bit_length() - 1) >> 2
        r = i >> 2
        rest = rem - (1 << (i << 2))
        best = INF
        arg: tuple[tuple[int, int, int, int] | None, Step | None] = (None, None)
        if not flag & NOSET:
            for mask, size in _set_options(rest, i & ~3):
                if size == 0:
                    continue
                need = 1 if size == 1 else 0
                ncap = cap + 1 - need
                if ncap > capmax:
                    ncap = capmax
                nrem = rest - mask
                fl = flag | NODEAD if ((nrem & -nrem).bit_length() - 1) >> 4 == r else 0
                v = f(nrem, wl - need, ncap, fl)
                if v < best:
                    best = v
                    arg = ((nrem, wl - need, ncap, fl), ((i, *unpack(mask)), need, "set"))
                    if v == 0:
                        memo[key] = (0, *arg)
                        return 0
        for hi in (False, True) if (high and i < 4) else (False,):
            for mask, span, gaps, ids in _walks(rest, i, hi, 1, True):
                pad = 3 - span if span < 3 else 0
                need = gaps + pad
                if need > 1:
                    continue
                ncap = cap + 1 if need == 0 and span < 13 and cap < capmax else cap
                nrem = rest - mask
                fl = flag if ((nrem & -nrem).bit_length() - 1) >> 4 == r else 0
                v = f(nrem, wl - need, ncap, fl)
                if v < best:
                    best = v
                    arg = ((nrem, wl - need, ncap, fl), ((i, *ids), need, "run"))
                    if v == 0:
                        memo[key] = (0, *arg)
                        return 0
        same = ((rest & -rest).bit_length() - 1) >> 4 == r
        if wr_base <= i < wr_base + 4:
            fl = flag if same else 0
            v = f(rest, wl + 1, cap, fl)
            if v < best:
                best = v
                arg = ((rest, wl + 1, cap, fl), ((i,), 0, "designate"))
        if not flag & NODEAD and pts[i] < best:
            fl = flag | NOSET if same else 0
            v = pts[i] + f(rest, wl, cap, fl)
            if v < best:
                best = v
                arg = ((rest, wl, cap, fl), None)
        memo[key] = (best, *arg)
        return best

    res = Result()
    res.wr_shift = wr_shift
    res.value = f(rem0, jokers, 0, 0)
    if res.value < INF:
        _trace(res, memo, (rem0, jokers, 0, 0), True)
    memo.clear()  # as in search_free
    return res
