"""A bot-playing process's memory over time: bot games played continuously in one
process, its resident size (RSS) sampled as they go.

    .venv/bin/python bench/bot_memory.py                # 10 minutes
    .venv/bin/python bench/bot_memory.py --minutes 60   # the hour

Games are as varied as a server's: 2 to 8 seats, every level (``random``,
``basic``, ``strong``, each seat drawn at random, with at least one ``strong``),
the three presets, and now and then options that change nothing for the bots
(extra rounds, the round order, the decks, a turn limit) -- a server holds
games of every kind at once.  Each game is played as the simulator plays it
(:func:`service.bots.simulate.play_game`: every bot decides from its own seat's
view and the public history).  The solver is the one ``SOLVER`` picks, as the
service does.

Every ``--sample-seconds`` (30) a line: the time, the games and decisions so
far, the RSS, and the byte-bounded caches' accounting (bytes held against each
bound, from :func:`service.engine.byte_cache.report`, when the code has it).  At
the end: the RSS at the start (the first game played), after the warm-up
(``--warmup-minutes``, default a fifth of the run) and at the end, the peak, and
the slope of the RSS after the warm-up (a least-squares line through the
samples, in MB per 10 minutes): a bounded process's slope is about 0.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.bots import LEVELS  # noqa: E402
from service.bots.simulate import game_seed, play_game  # noqa: E402
from service.config import Config  # noqa: E402
from service.engine.options import PRESETS, Options  # noqa: E402
from service.engine.solver import switch as solver_switch  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")
MB = 1 << 20


def rss() -> int:
    """This process's resident set, in bytes (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def accounting() -> str:
    """The byte-bounded caches' accounting, when this code has them."""
    try:
        from service.engine import byte_cache
    except ImportError:
        return ""
    used, bound = byte_cache.totals()
    return f" caches {used / MB:6.1f}/{bound / MB:.0f} MB"


def game_options(rng: random.Random) -> Options:
    """A preset, and one time in three some options the bots do not read."""
    base = PRESETS[rng.choice(sorted(PRESETS))]
    if rng.random() < 1 / 3:
        extra: dict[str, Any] = rng.choice(
            [
                {"extra_rounds": rng.randint(1, 2)},
                {"round_order": "up_down"},
                {"decks": 3},
                {"max_turns_per_round": rng.choice([40, 60, 100])},
            ]
        )
        return Options.from_dict(extra, base=base)
    return base


def table(rng: random.Random) -> tuple[str, ...]:
    """2 to 8 seats of levels drawn at random, at least one ``strong``."""
    seats = [rng.choice(LEVELS) for _ in range(rng.randint(2, 8))]
    seats[rng.randrange(len(seats))] = "strong"
    return tuple(seats)


def slope(points: list[tuple[float, int]]) -> float:
    """Least-squares slope of (seconds, bytes), in MB per 10 minutes."""
    if len(points) < 2:
        return 0.0
    xs = [t for t, _ in points]
    ys = [b / MB for _, b in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if not sxx:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx * 600


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--sample-seconds", type=float, default=30.0)
    parser.add_argument("--warmup-minutes", type=float, default=None)
    parser.add_argument("--seed", default="bot-memory")
    args = parser.parse_args(argv)
    warmup = args.minutes / 5 if args.warmup_minutes is None else args.warmup_minutes
    config = Config.from_env()
    solver_switch.use_c(config.solver == "C")  # as create_app does
    try:
        from service.engine import byte_cache
    except ImportError:  # a release before the bounds: measured as it is
        pass
    else:
        byte_cache.configure(config.bot_cache_mb << 20)
    rng = random.Random(args.seed)
    print(
        f"bot games for {args.minutes:g} min, RSS every {args.sample_seconds:g} s "
        f"(warm-up {warmup:g} min), pid {os.getpid()}",
        flush=True,
    )
    start = time.monotonic()
    end = start + args.minutes * 60
    next_sample = start
    games = decisions = 0
    samples: list[tuple[float, int]] = []
    first: int | None = None
    while True:
        levels = table(rng)
        outcome = play_game(levels, game_options(rng), game_seed(args.seed, games), timed=True)
        games += 1
        decisions += len(outcome.decision_times)
        now = time.monotonic()
        if first is None:
            first = rss()
        if now >= next_sample or now >= end:
            size = rss()
            samples.append((now - start, size))
            print(
                f"{(now - start) / 60:6.1f} min  games {games:6d}  decisions {decisions:8d}  "
                f"RSS {size / MB:7.1f} MB{accounting()}",
                flush=True,
            )
            next_sample += args.sample_seconds
        if now >= end:
            break
    after = [(t, b) for t, b in samples if t >= warmup * 60]
    warm = after[0][1] if after else samples[-1][1]
    assert first is not None
    print(
        f"RSS: start {first / MB:.1f} MB, after warm-up ({warmup:g} min) {warm / MB:.1f} MB, "
        f"end {samples[-1][1] / MB:.1f} MB, peak {max(b for _, b in samples) / MB:.1f} MB; "
        f"slope after warm-up {slope(after):+.1f} MB per 10 min; "
        f"{games} games, {decisions} decisions",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
