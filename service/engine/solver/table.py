"""The lay-off search of :mod:`service.engine.solver` (``lay_off``, melds on the
table), bounded.

What it answers is defined by the plain search it replaces (kept as the
reference in ``harness/legacy_layoffs.py``): list every *plan* -- one
valid pick of cards for each table run, in the order of the runs and of each
run's picks -- sort the plans by the number of cards they lay off (most first,
stable), try each with each *flex* assignment (a rank or none for every
all-wild table set, in product order) and keep the first that leaves the
fewest points.  That is exponential in runs x jokers (16 jokers onto 32 runs:
C(48, 16) plans).

Here the same first optimum is found without listing the plans:

* a plan only matters through the multiset ``L`` of cards it lays off (the
  rest of the hand is solved, the same ``L`` gives the same rest).  The sums
  the runs can reach, ``reach[k]`` for runs ``k..``, are sets of sub-multisets
  of the hand (at most the hand's sub-multisets, a few thousand), built run by
  run from the back;
* a flex assignment only matters through the set ``S`` of ranks it adds to the
  table's sets; points only fall as ``S`` grows (those ranks cost nothing), so
  the best of an ``L`` is met with as many useful ranks as there are flex sets;
* the optimum ``M`` known, the plan is the first, in the plans' order, whose
  ``L`` reaches ``M`` among the ``L`` of the most cards: chosen run by run (the
  first pick that can still be completed to such an ``L``), and its flex tuple
  likewise coordinate by coordinate.  That plan and flex are then solved as the
  plain search solves them, so the arrangement is the very same.

Multisets of the hand's cards are ints, one field of ``width`` bits a distinct
card, the top bit of each field a guard: ``a - b`` is a sub-multiset test.

Every step counts work units against a :class:`Budget`; past it the search
stops with :class:`~service.engine.errors.SearchTooLargeError` (a backstop: no
table a game can build comes near it, see ``bench/solver_bench.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from itertools import combinations

from service.engine.cards import JOKER, Card, Rank
from service.engine.melds import Arrangement, Meld, MeldKind, extend_meld
from service.engine.options import Options
from service.engine.solver.hand import solve_hand
from service.engine.solver.picks import run_picks
from service.engine.solver.plan import Solved, TableInfo, finish
from service.engine.solver.work_budget import SOLVE_UNITS, Budget


class _Multisets:
    """Sub-multisets of one hand as ints (one guarded field a distinct card)."""

    def __init__(self, hand: Counter[Card]) -> None:
        self.kinds = sorted(hand)
        width = max(hand.values(), default=1).bit_length() + 1
        self.width = width
        self.shift = {c: j * width for j, c in enumerate(self.kinds)}
        self.guard = sum(1 << (j * width + width - 1) for j in range(len(self.kinds)))
        self.field = (1 << width) - 1
        self.hand = self.encode(hand)

    def encode(self, cards: Counter[Card]) -> int:
        return sum(n << self.shift[c] for c, n in cards.items())

    def within(self, big: int, small: int) -> bool:
        """``small`` is a sub-multiset of ``big`` (fields of ``small`` below 2**width)."""
        g = self.guard
        return ((big | g) - small) & g == g

    def split(self, x: int) -> tuple[int, int]:
        """``x`` as (its cards but jokers, its number of jokers)."""
        n = self.jokers(x)
        return x - self.joker_count(n), n

    def jokers(self, x: int) -> int:
        shift = self.shift.get(JOKER)
        return 0 if shift is None else (x >> shift) & self.field

    def joker_count(self, n: int) -> int:
        """``n`` jokers as a multiset (none when the hand holds none)."""
        shift = self.shift.get(JOKER)
        return 0 if shift is None else n << shift

    def cards(self, x: int) -> list[Card]:
        """The cards of ``x``, sorted."""
        out: list[Card] = []
        w, f = self.width, self.field
        for j, c in enumerate(self.kinds):
            out += [c] * ((x >> (j * w)) & f)
        return out

    def size(self, x: int) -> int:
        w, f = self.width, self.field
        return sum((x >> (j * w)) & f for j in range(len(self.kinds)))


def best_with_table(
    cards: list[Card],
    wild_rank: Rank,
    options: Options,
    table: Sequence[Meld],
    budget: Budget,
) -> Arrangement:
    """The arrangement of ``cards`` (sorted) with ``table``'s melds to lay off onto."""
    info = TableInfo(table, wild_rank, options)
    base_rank = dict(info.set_rank)
    ranks = sorted({c.id >> 2 for c in cards if not c.is_joker and c.rank != wild_rank})
    hand = Counter(cards)
    ms = _Multisets(hand)
    picks_of: dict[tuple[Card, ...], list[Counter[Card]]] = {}  # identical runs pick alike
    choices: list[tuple[int, list[Counter[Card]], list[int]]] = []
    for t, meld in enumerate(table):
        if meld.kind is MeldKind.RUN:
            found = picks_of.get(meld.cards)
            if found is None:
                found = picks_of[meld.cards] = run_picks(hand, meld, wild_rank, options, budget)
            choices.append((t, found, [ms.encode(p) for p in found]))
    reach = _reach([enc for _, _, enc in choices], ms, budget)

    def solve(rest: list[Card], flex: Sequence[int | None]) -> Solved:
        budget.spend(SOLVE_UNITS)
        if flex:
            info.set_rank = dict(base_rank)
            for t, r in zip(info.flex, flex, strict=True):
                if r is not None:
                    info.set_rank.setdefault(r, t)
        solved = solve_hand(rest, wild_rank, options, info)
        assert solved is not None
        return solved

    n_flex = len(info.flex)
    values: dict[tuple[int, frozenset[int]], int] = {}

    def value(lay: int, extra: frozenset[int]) -> int:
        """Points of the hand less ``lay`` with the flex sets taking ``extra``."""
        key = (lay, extra)
        v = values.get(key)
        if v is None:
            flex = [*sorted(extra), *[None] * (n_flex - len(extra))] if n_flex else []
            v = values[key] = solve(ms.cards(ms.hand - lay), flex)[0]
        return v

    def useful(lay: int) -> list[int]:
        """The ranks a flex set could take that the rest of the hand holds."""
        rest = {c.id >> 2 for c in ms.cards(ms.hand - lay)}
        return [r for r in ranks if r in rest and r not in base_rank]

    def best_of(lay: int, have: frozenset[int], room: int) -> int:
        """The fewest points with ``have`` plus at most ``room`` more useful ranks."""
        more = [r for r in useful(lay) if r not in have]
        k = min(room, len(more))
        return min(value(lay, have | frozenset(extra)) for extra in combinations(more, k))

    by_size: dict[int, list[int]] = {}
    for lay in reach[0].every():
        by_size.setdefault(ms.size(lay), []).append(lay)
    least: int | None = None
    most_cards = 0
    winners: list[int] = []
    for size in sorted(by_size, reverse=True):
        for lay in by_size[size]:
            v = best_of(lay, frozenset(), n_flex)
            if least is None or v < least:
                least, most_cards, winners = v, size, [lay]
            elif v == least and size == most_cards:
                winners.append(lay)
        if least == 0:
            break  # nothing leaves fewer; fewer cards laid off come after these
    assert least is not None
    plan, lay = _first_plan(choices, reach, winners, ms, budget)
    flex = _first_flex(lay, least, n_flex, ranks, useful(lay), best_of)
    rest = ms.cards(ms.hand - lay)
    points, groups, deadwood, layoffs = solve(rest, flex)
    assert points == least
    for t, cs in plan.items():
        layoffs.setdefault(t, [])[:0] = cs
    for t, cs in layoffs.items():
        assert extend_meld(table[t], cs, wild_rank, options) is not None
    return finish(points, groups, deadwood, layoffs, wild_rank, options)


class _Reach:
    """The multisets that one pick from each of some runs can lay off, within the
    hand.  A run that takes some cards takes them with any more jokers too (a
    laid-off joker rides on the meld), so past the last run these are kept as
    the cards but jokers, each with the fewest jokers it goes with."""

    __slots__ = ("fewest", "end", "ms")

    def __init__(self, fewest: dict[int, int], end: bool, ms: _Multisets) -> None:
        self.fewest = fewest
        self.end = end  # no run left: only the empty pick, no joker
        self.ms = ms

    def __contains__(self, x: int) -> bool:
        if self.end:
            return x == 0
        others, jokers = self.ms.split(x)
        least = self.fewest.get(others)
        return least is not None and jokers >= least

    def every(self) -> list[int]:
        """All of them, as multisets."""
        if self.end:
            return [0]
        ms = self.ms
        top = ms.jokers(ms.hand)
        return [
            x + ms.joker_count(j) for x, least in self.fewest.items() for j in range(least, top + 1)
        ]


def _reach(encoded: list[list[int]], ms: _Multisets, budget: Budget) -> list[_Reach]:
    """``reach[k]``: what runs ``k..`` can lay off (see :class:`_Reach`).

    Sums of picks do not depend on the order of the runs: once a run's picks
    add nothing to what the runs after it reach, an equal run before adds
    nothing to what those runs and any others reach (``R + P = R`` gives
    ``R + X + P = R + X``), so it is skipped."""
    reach: list[_Reach] = [_Reach({0: 0}, True, ms)]
    others_of_hand, top = ms.split(ms.hand)
    within = ms.within
    saturated: set[tuple[int, ...]] = set()
    for picks in reversed(encoded):
        key = tuple(picks)
        if key in saturated:
            reach.append(reach[-1])
            continue
        after = reach[-1].fewest
        own: dict[int, int] = {}
        for p in picks:
            others, jokers = ms.split(p)
            if jokers < own.get(others, top + 1):
                own[others] = jokers
        budget.spend(len(own) * len(after))
        fewest: dict[int, int] = {}
        for a, ja in own.items():
            for b, jb in after.items():
                s, j = a + b, ja + jb
                if j <= top and j < fewest.get(s, top + 1) and within(others_of_hand, s):
                    fewest[s] = j
        if fewest == after and not reach[-1].end:
            saturated.add(key)
        reach.append(_Reach(fewest, False, ms))
    reach.reverse()
    return reach


def _first_plan(
    choices: list[tuple[int, list[Counter[Card]], list[int]]],
    reach: list[_Reach],
    targets: list[int],
    ms: _Multisets,
    budget: Budget,
) -> tuple[dict[int, list[Card]], int]:
    """The first plan in the runs' order whose cards make one of ``targets``,
    and those cards."""
    plan: dict[int, list[Card]] = {}
    so_far = 0
    hand, within = ms.hand, ms.within
    for k, (t, found, encoded) in enumerate(choices):
        after = reach[k + 1]
        for pick, enc in zip(found, encoded, strict=True):
            budget.spend(len(targets))
            grown = so_far + enc
            if within(hand, grown) and any(
                within(lay, grown) and lay - grown in after for lay in targets
            ):
                so_far = grown
                if pick:
                    plan[t] = sorted(pick.elements())
                break
        else:
            raise AssertionError("a target is reachable by construction")
    return plan, so_far


def _first_flex(
    lay: int,
    least: int,
    n_flex: int,
    ranks: list[int],
    useful: list[int],
    best_of: Callable[[int, frozenset[int], int], int],
) -> list[int | None]:
    """The first flex tuple, in product order over ``[None, *ranks]``, that leaves
    ``least`` points with ``lay`` laid off.  A rank the rest does not hold, one
    the table's sets take already or one an earlier flex set took changes
    nothing: it is None, which comes first."""
    flex: list[int | None] = []
    have: frozenset[int] = frozenset()
    for i in range(n_flex):
        room = n_flex - i - 1
        choice: int | None = None
        if best_of(lay, have, room) != least:
            choice = next(
                r
                for r in ranks
                if r in useful and r not in have and best_of(lay, have | {r}, room) == least
            )
            have = have | {choice}
        flex.append(choice)
    return flex
