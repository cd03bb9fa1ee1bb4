"""The population's hidden strength: who the players are, the scalar their final
ratings should order them by, the calibration that scale comes from, and the rank
correlation that compares the two.

A player is a bot level (:data:`SHARES` of the population) with a noise drawn
uniformly from ``[0, NOISE_MAX]`` (:mod:`bench._population_policy`).  Its *hidden
strength* is the points per game it scores better than the reference player
(:data:`REFERENCE`, ``basic`` without noise) in 2-player games of the same deals,
seats swapped (a duplicate pair per deal): measured at the grid of noises
:data:`CALIBRATION_NOISES` of each level (:func:`calibrate`, ``--calibrate``;
:data:`CALIBRATION` holds the run's figures) and interpolated linearly between
them.  Only the order matters to a rank correlation; the calibration checks it:
each level's strength falls as its noise grows, and the levels keep their order.
"""

from __future__ import annotations

import bisect
import math
import multiprocessing
import random
import statistics
from collections.abc import Sequence
from typing import Any

from bench._population_policy import LEVELS, Style, play_out
from service.bots import expert
from service.bots.simulate import game_seed, public_events
from service.engine.options import preset
from service.engine.rules import Game
from service.engine.state import State

SHARES = {"basic": 0.70, "strong": 0.25, "expert": 0.05}
"""The share of each level in the population (the expert, the slowest by far, a
small one)."""

NOISE_MAX = 0.15
"""A player's noise is drawn uniformly from 0 to this."""

REFERENCE = Style("basic", 0.0)
"""The opponent of every calibration game."""

CALIBRATION_NOISES = (0.0, 0.05, 0.10, 0.15)
"""The noises each level is calibrated at."""

CALIBRATION: dict[str, tuple[float, ...]] = {
    "basic": (0.0, -16.9, -26.8, -40.4),
    "strong": (21.6, 1.7, -12.5, -29.6),
    "expert": (17.4, 0.9, -11.2, -26.8),
}
"""Points per game better than :data:`REFERENCE` at each of
:data:`CALIBRATION_NOISES`, per level (``bench/population.py --calibrate``)."""


def draw_population(count: int, seed: int) -> list[tuple[Style, int]]:
    """``count`` players: each one's style and table size (2 or 4, alternately)."""
    rng = random.Random(seed)
    levels, weights = list(SHARES), list(SHARES.values())
    out = []
    for i in range(count):
        level = rng.choices(levels, weights)[0]
        out.append((Style(level, round(rng.uniform(0.0, NOISE_MAX), 4)), 2 if i % 2 == 0 else 4))
    return out


def hidden_strength(style: Style, table: dict[str, tuple[float, ...]] | None = None) -> float:
    """The hidden strength of ``style``: the calibration's points per game over the
    reference, interpolated linearly in the noise.

    >>> hidden_strength(Style("basic", 0.0), {"basic": (0.0, -10.0, -30.0, -50.0)})
    0.0
    >>> hidden_strength(Style("basic", 0.075), {"basic": (0.0, -10.0, -30.0, -50.0)})
    -20.0
    """
    points = (table or CALIBRATION)[style.level]
    noises = CALIBRATION_NOISES
    i = min(max(bisect.bisect_right(noises, style.noise) - 1, 0), len(noises) - 2)
    frac = (style.noise - noises[i]) / (noises[i + 1] - noises[i])
    return points[i] + frac * (points[i + 1] - points[i])


def ranks(values: Sequence[float]) -> list[float]:
    """The ranks of ``values`` (1 = the least), ties sharing their mean rank.

    >>> ranks([10, 30, 20, 20])
    [1.0, 4.0, 2.5, 2.5]
    """
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation of ``xs`` and ``ys`` (Pearson's of their ranks,
    ties at their mean rank); NaN when either is constant or there are fewer than 3.

    >>> spearman([1, 2, 3, 4], [10, 20, 30, 40]), spearman([1, 2, 3, 4], [4, 3, 2, 1])
    (1.0, -1.0)
    """
    if len(xs) < 3:
        return math.nan
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return math.nan
    return sxy / math.sqrt(sxx * syy)


def _calibration_game(job: tuple[list[Any], int, int, int]) -> tuple[int, float, bool]:
    """One calibration game: ``style`` against the reference on deal ``deal``, seat
    ``swap``; (deal, the style's total minus the reference's, whether it won)."""
    raw, deal, swap, samples = job
    expert.use_samples(samples)
    style = Style(raw[0], raw[1])
    seed = game_seed("population-calibration", deal)
    styles = [style, REFERENCE] if swap == 0 else [REFERENCE, style]
    state, events = State.start(Game(2, preset("classic")), seed)
    play_out(state, seed, styles, state.apply, public_events(events))
    mine = swap
    return deal, float(state.totals[mine] - state.totals[1 - mine]), mine in state.winners


def calibrate(deals: int, jobs: int, samples: int) -> dict[str, Any]:
    """Every grid point (:data:`CALIBRATION_NOISES` of each level) against the
    reference on ``deals`` deals, seats swapped: per point the points per game
    better than the reference with a 95% interval over deals and the win rate, and
    per pair of neighbours (the next noise of a level; the next level at one
    noise) the paired difference over the same deals."""
    points = [Style(level, noise) for level in LEVELS for noise in CALIBRATION_NOISES]
    work = [
        (p.to_list(), deal, swap, samples)
        for p in points
        for deal in range(deals)
        for swap in (0, 1)
    ]
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        results = pool.map(_calibration_game, work, chunksize=4)
    per_point: dict[Style, dict[int, list[float]]] = {p: {} for p in points}
    wins: dict[Style, int] = dict.fromkeys(points, 0)
    for (raw, _deal, _swap, _samples), (deal, diff, won) in zip(work, results, strict=True):
        style = Style(raw[0], raw[1])
        per_point[style].setdefault(deal, []).append(-diff)  # better: fewer points
        wins[style] += int(won)

    def by_deal(style: Style) -> dict[int, float]:
        return {d: statistics.fmean(v) for d, v in per_point[style].items()}

    def interval(values: list[float]) -> tuple[float, float]:
        half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
        return statistics.fmean(values), half

    table: dict[str, list[float]] = {level: [] for level in LEVELS}
    rows = []
    for p in points:
        mean, half = interval(list(by_deal(p).values()))
        table[p.level].append(round(mean, 1))
        rows.append(
            {
                "level": p.level,
                "noise": p.noise,
                "points": mean,
                "ci95": half,
                "win_rate": wins[p] / (2 * deals),
            }
        )
    steps = []
    for a, b in _neighbours():
        da, db = by_deal(a), by_deal(b)
        mean, half = interval([da[d] - db[d] for d in da])
        steps.append({"stronger": a.to_list(), "weaker": b.to_list(), "points": mean, "ci95": half})
    return {
        "deals": deals,
        "expert_samples": samples,
        "points": rows,
        "steps": steps,
        "table": table,
    }


def _neighbours() -> list[tuple[Style, Style]]:
    """The pairs the calibration compares: each level at a noise and the next noise;
    each level and the one below it at the same noise."""
    out = []
    for level in LEVELS:
        for lo, hi in zip(CALIBRATION_NOISES, CALIBRATION_NOISES[1:], strict=False):
            out.append((Style(level, lo), Style(level, hi)))
    for low, high in zip(LEVELS, LEVELS[1:], strict=False):
        for noise in CALIBRATION_NOISES:
            out.append((Style(high, noise), Style(low, noise)))
    return out
