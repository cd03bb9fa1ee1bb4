"""Adversarial lay-off tables for bench/solver_bench.py: the issue's examples
(jokers x full runs), the worst tables a real game can build, and a seeded
random search for worse ones, each timed with its work units.

A real game here is the most the rules allow: 8 players, 12 decks
(``MAX_DECKS``), two jokers a deck (24), ``lay_off``, ``all_wild_melds``,
``extra_rounds`` 2 (hands of 15, 16 after the draw).  The hand evaluated is the
last player's; the table holds at most what the seven others lay down: 35
melds of 105 cards, no card more than 12 times and no more than 24 jokers in
hand and table together.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from service.engine.cards import JOKER, Card, Rank
from service.engine.melds import Meld, classify_meld
from service.engine.options import MAX_DECKS, Options
from service.engine.solver.table import best_with_table
from service.engine.solver.work_budget import WORK_BUDGET, Budget

GAME = Options(
    jokers_per_deck=2, lay_off=True, all_wild_melds=True, extra_rounds=2, decks=MAX_DECKS
)
ISSUE = Options(jokers_per_deck=2, lay_off=True, all_wild_melds=True)
HAND, MELDS, CARDS, JOKERS = 16, 35, 105, 2 * MAX_DECKS

Case = tuple[str, list[Card], Rank, Options, list[Meld]]


def _card(rank: int, suit: int) -> Card:
    return Card.from_id((rank - 1) * 4 + suit)


def _meld(cards: list[Card], wild: Rank, options: Options) -> Meld:
    meld = classify_meld(cards, wild, options)
    assert meld is not None, cards
    return meld


def issue_cases() -> list[Case]:
    """The issue's bodies: ``jokers`` jokers against ``runs`` full 13-card runs."""
    out = []
    for jokers, runs in ((16, 8), (8, 16), (16, 32)):
        table = [
            _meld([_card(r, k % 4) for r in range(1, 14)], Rank.SEVEN, ISSUE) for k in range(runs)
        ]
        out.append((f"issue {jokers}JK x {runs} runs", [JOKER] * jokers, Rank.SEVEN, ISSUE, table))
    return out


def legal(hand: list[Card], table: list[Meld]) -> bool:
    """Whether a real game (see the module) can put this hand and table together."""
    every = Counter(hand + [c for m in table for c in m.cards])
    jokers = every.pop(JOKER, 0)
    cards = sum(len(m.cards) for m in table)
    return (
        len(hand) <= HAND
        and len(table) <= MELDS
        and cards <= CARDS
        and jokers <= JOKERS
        and all(n <= MAX_DECKS for n in every.values())
    )


def real_cases() -> list[Case]:
    """Hand-made worst tables of a real game."""
    wild = Rank.TWO  # round 13 of extra_rounds: 2s wild, hands of 15
    out: list[Case] = []
    # 16 jokers against 35 three-card runs
    runs = [
        _meld([_card(lo + k, s) for k in range(3)], wild, GAME)
        for s in range(4)
        for lo in (3, 6, 9, 11)
    ]
    table = (runs * 3)[:MELDS]
    out.append(("real 16JK x 35 runs", [JOKER] * 16, wild, GAME, table))
    # one suit's naturals, wild-rank cards and jokers against 27 overlapping
    # runs of that suit, and 8 all-wild sets of 2s
    hearts = [_meld([_card(lo + k, 2) for k in range(3)], wild, GAME) for lo in range(3, 12)]
    twos = _meld([_card(2, s) for s in (0, 1, 3)], wild, GAME)
    hand = [_card(r, 2) for r in (1, 3, 6, 9, 12, 13)] + [_card(2, s) for s in range(4)]
    hand += [JOKER] * 6
    out.append(("real hearts x 27 runs + 8 flex", hand, wild, GAME, hearts * 3 + [twos] * 8))
    # few all-wild sets and a hand of many ranks: the flex choice is C(13, k)
    for k in (4, 6):
        table = [twos] * k + (hearts * 3)[: MELDS - k]
        hand = [_card(r, s) for r, s in zip(range(1, 14), [2, 0, 1, 3] * 4, strict=False)]
        hand = [c for c in hand if c.rank != wild][:12] + [JOKER] * 4
        out.append((f"real 12 ranks x {k} flex + runs", hand, wild, GAME, table))
    return [case for case in out if legal(case[1], case[4])]


def random_cases(seed: int, n: int) -> list[Case]:
    """``n`` random legal tables shaped to be hard: one suit's runs (some with a
    wild, some alike), all-wild sets, natural sets, and a hand of that suit's
    naturals, wild-rank cards and jokers."""
    rng = random.Random(seed)
    out: list[Case] = []
    while len(out) < n:
        wild = Rank(rng.randint(1, 13))
        suit = rng.randrange(4)
        ranks = [r for r in range(1, 14) if r != wild]
        wilds = [_card(wild, s) for s in range(4)] + [JOKER]
        table: list[Meld] = []
        for _ in range(rng.randint(10, MELDS)):
            roll = rng.random()
            if roll < 0.2:
                cards = [rng.choice(wilds) for _ in range(3)]
            elif roll < 0.3:
                r = rng.choice(ranks)
                cards = [_card(r, rng.randrange(4)) for _ in range(3)]
            else:
                length = rng.randint(3, 5)
                lo = rng.randint(1, 14 - length)
                cards = [_card(lo + k, suit) for k in range(length)]
                if rng.random() < 0.3:
                    cards[rng.randrange(length)] = rng.choice(wilds)
            meld = classify_meld(cards, wild, GAME)
            if meld is not None and legal([], [*table, meld]):
                table.append(meld)
        hand = [_card(r, suit) for r in rng.sample(ranks, rng.randint(0, 8))]
        hand += [_card(wild, rng.randrange(4)) for _ in range(rng.randint(0, 5))]
        hand += [JOKER] * rng.randint(0, HAND - len(hand))
        hand = hand[:HAND]
        if hand and legal(hand, table):
            out.append((f"random {len(out)}", hand, wild, GAME, table))
    return out


def measure(case: Case) -> tuple[float, int]:
    """Seconds and work units of the bounded search on one case (no budget)."""
    _, hand, wild, options, table = case
    budget = Budget(1 << 62)
    t0 = time.perf_counter()
    best_with_table(sorted(hand), wild, options, table, budget)
    return time.perf_counter() - t0, budget.used


def _legacy(case: Case) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from harness.legacy_layoffs import legacy_best_arrangement

    _, hand, wild, options, table = case
    legacy_best_arrangement(hand, wild, options, table)


def measure_before(case: Case, timeout: float) -> float | None:
    """Seconds the plain search (before) takes in a child process, None past ``timeout``."""
    ctx = multiprocessing.get_context("fork")
    child = ctx.Process(target=_legacy, args=(case,))
    t0 = time.perf_counter()
    child.start()
    child.join(timeout)
    elapsed = time.perf_counter() - t0
    if child.is_alive():
        child.kill()  # the child started here, by its own handle
        child.join()
        return None
    return elapsed


def report(seed: int, trials: int, before_timeout: float, out: Callable[[str], None]) -> bool:
    """Print every family's time and units; True if the issue's tables stay
    within the endpoint's work budget."""
    out(f"lay-off tables (POST /v1/hands/evaluate work budget {WORK_BUDGET:,} units)")
    ok = True
    for case in issue_cases():
        seconds, units = measure(case)
        ok = ok and units <= WORK_BUDGET
        before = measure_before(case, before_timeout) if before_timeout > 0 else None
        was = (
            "not run"
            if before_timeout <= 0
            else (f">{before_timeout:.0f} s (stopped)" if before is None else f"{before:.2f} s")
        )
        out(f"  {case[0]:34s} after {seconds * 1e3:9.1f} ms {units:>10,} units  before {was}")
    worst: tuple[float, int, str] = (0.0, 0, "")
    for case in real_cases() + random_cases(seed, trials):
        seconds, units = measure(case)
        if not case[0].startswith("random"):
            out(f"  {case[0]:34s} after {seconds * 1e3:9.1f} ms {units:>10,} units")
        if units > worst[1]:
            worst = (seconds, units, case[0])
    out(
        f"  real-game worst ({trials} random + hand-made): {worst[2]}, "
        f"{worst[0] * 1e3:.1f} ms, {worst[1]:,} units ({worst[1] / WORK_BUDGET:.1%} of the "
        "endpoint's budget; a game's own views have none)"
    )
    return ok
