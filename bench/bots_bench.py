"""Benchmarks of the bots: decision time per level, and strength.

    .venv/bin/python bench/bots_bench.py               # decision times (14-card rounds)
    .venv/bin/python bench/bots_bench.py --strength    # seeded tournaments (slow)
    .venv/bin/python bench/bots_bench.py --strength --jobs 2 --write bench/BOTS.md
    .venv/bin/python bench/bots_bench.py --only-expert --games 100 --games-4p 160
    .venv/bin/python bench/bots_bench.py --table expert,strong --games 100 --jobs 1

Decision times: self-play games with ``extra_rounds=1`` (so the last round deals
14 cards); every decision is timed and the median and worst are printed per
level, for all hand sizes and for 14-card hands (15 cards in hand after the
draw).  Target: strong <= 20 ms median on the 14-card hands.

Strength: full games (11 rounds, classic rules) played with the engine directly
for each pairing, seats rotating from game to game; per level the mean total
per game with a 95% confidence interval and the win rate.  The tables with
``expert`` (2 players against ``basic`` and against ``strong``; 4 players
``expert, strong, basic, basic``) play ``--expert-games`` / ``--expert-games-4p``
games in a full run, every expert decision timed (median, p90, p99, worst);
``--only-expert`` runs those tables alone, ``--table`` any one table, and a long
table prints its differences so far every 5 deals on stderr.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service.bots import LEVELS  # noqa: E402
from service.bots.simulate import (  # noqa: E402
    SimulatedGame,
    format_table,
    game_seed,
    paired_difference,
    play_game,
    run_games,
    summarize,
)
from service.engine.options import Options

PAIRINGS: tuple[tuple[str, ...], ...] = (
    ("strong", "basic"),
    ("basic", "random"),
    ("random", "basic", "strong", "strong"),
    ("expert", "strong"),
    ("expert", "basic"),
    ("expert", "strong", "basic", "basic"),
)
EXPERT_PAIRINGS = tuple(p for p in PAIRINGS if "expert" in p)
COMPARED = (("expert", "basic"), ("expert", "strong"))
"""Differences printed for every table where both levels sit, besides the neighbours'."""


SEATINGS = (
    ("strong", "basic", "random"),
    ("basic", "strong", "random"),
    ("expert", "basic", "strong"),
)
"""The 3-player tables of the timing games, played ``--timing-games`` times each."""


def timing(games: int, seed: str) -> str:
    """Median and worst decision time per level (ms)."""
    options = Options(extra_rounds=1)
    samples: dict[str, list[tuple[int, float]]] = {level: [] for level in LEVELS}
    for i in range(games):
        for levels in SEATINGS:
            out = play_game(levels, options, game_seed(f"time:{seed}", i), timed=True)
            for level, size, seconds in out.decision_times:
                samples[level].append((size, seconds))
    lines = [
        f"decision times over {games * len(SEATINGS)} games (3 players, extra_rounds=1), ms",
        "| level | decisions | median | worst | median, 14-card round | worst, 14-card round |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for level in LEVELS:
        all_t = [s * 1000 for _, s in samples[level]]
        big = [s * 1000 for size, s in samples[level] if size >= 14]
        lines.append(
            f"| {level} | {len(all_t)} | {statistics.median(all_t):.2f} | {max(all_t):.2f} | "
            f"{statistics.median(big):.2f} | {max(big):.2f} |"
        )
    return "\n".join(lines)


def strength(
    games: int,
    games_multi: int,
    seed: str,
    jobs: int,
    options: Options,
    pairings: Sequence[tuple[str, ...]] = PAIRINGS,
    expert_games: tuple[int, int] | None = None,
) -> tuple[str, float]:
    """The tournament tables (Markdown, with the decision times of the levels
    that search) and the seconds taken: ``games`` per 2-player pairing,
    ``games_multi`` per 4-player table."""
    started = time.perf_counter()
    parts = []
    times: dict[str, list[float]] = {}
    for levels in pairings:
        count = games_multi if len(levels) > 2 else games
        if expert_games is not None and "expert" in levels:  # the costly level
            count = expert_games[len(levels) > 2]
        t0 = time.perf_counter()
        outcomes: list[SimulatedGame] = []
        played = run_games(
            levels, options, count, f"{seed}:{','.join(levels)}", jobs=jobs, timed=True
        )
        for out in played:
            outcomes.append(out)
            if len(outcomes) % (PROGRESS_DEALS * len(levels)) == 0 and len(outcomes) < count:
                print(_interim(outcomes, levels), file=sys.stderr, flush=True)
        took = time.perf_counter() - t0
        for out in outcomes:
            for level, _size, seconds in out.decision_times:
                if level in TIMED:
                    times.setdefault(level, []).append(seconds * 1000)
        title = " vs ".join(levels)
        distinct = list(dict.fromkeys(levels))
        pairs = list(zip(distinct[::-1], distinct[::-1][1:], strict=False))
        pairs += [
            (a, b) for a, b in COMPARED if {a, b} <= set(levels) and {a, b} not in map(set, pairs)
        ]
        diffs = []
        for better, worse in pairs:
            d, ci = paired_difference(outcomes, better, worse)
            diffs.append(f"{better} - {worse}: {d:+.1f} ± {ci:.1f} points per game (paired)")
        parts.append(
            f"**{title}** ({count} games, {took:.0f} s)\n\n{format_table(summarize(outcomes))}"
            + "".join(f"\n\n{line}" for line in diffs)
        )
        print(parts[-1] + "\n", flush=True)
    if times:
        parts.append(decision_times(times))
        print(parts[-1] + "\n", flush=True)
    return "\n\n".join(parts), time.perf_counter() - started


def expert_cpu(games: int, seed: str) -> str:
    """The expert's decision times as CPU time of this process (``time.process_time``)
    beside wall time, over ``games`` games at 2 players (against strong) and as many
    at 4 (expert, strong, basic, basic): CPU time does not count the time other
    processes take the CPUs from it, so it is what an idle CPU would take."""
    from service import bots
    from service.bots.simulate import public_events
    from service.bots.turn_rng import turn_rng
    from service.engine.rules import Game
    from service.engine.shuffle import Shuffler
    from service.engine.state import State
    from service.engine.view import observe

    cpu: list[float] = []
    wall: list[float] = []
    for i in range(games):
        for levels in (("expert", "strong"), ("expert", "strong", "basic", "basic")):
            hex_seed = game_seed(f"cpu:{seed}:{len(levels)}", i)
            state, events = State.start(Game(len(levels)), hex_seed)
            history = public_events(events)
            shuffler = Shuffler.from_hex(hex_seed)
            while state.round is not None:
                seat = state.round.turn
                view = observe(state, seat)
                rng = turn_rng(shuffler, state)
                c0, w0 = time.process_time(), time.perf_counter()
                move = bots.decide(levels[seat], view, rng, history)
                if levels[seat] == "expert":
                    cpu.append((time.process_time() - c0) * 1000)
                    wall.append((time.perf_counter() - w0) * 1000)
                history += public_events(state.apply(seat, move))
    lines = [
        f"expert decision times over {games} games at 2 and at 4 players, ms",
        "| clock | decisions | median | p90 | p99 | worst |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, found in (("CPU (process_time)", cpu), ("wall", wall)):
        values = sorted(found)
        p90, p99 = (values[min(len(values) - 1, int(q * len(values)))] for q in (0.9, 0.99))
        lines.append(
            f"| {name} | {len(values)} | {statistics.median(values):.1f} | {p90:.1f} | "
            f"{p99:.1f} | {values[-1]:.1f} |"
        )
    return "\n".join(lines)


PROGRESS_DEALS = 5
"""A long table prints its differences so far every this many deals (on stderr)."""


def _interim(outcomes: Sequence[SimulatedGame], levels: Sequence[str]) -> str:
    """The compared levels' differences over the deals played so far."""
    deals = len(outcomes) // len(levels)
    parts = [
        "{} - {} {:+.1f} ± {:.1f}".format(a, b, *paired_difference(outcomes, a, b))
        for a, b in COMPARED
        if {a, b} <= set(levels)
    ]
    return f"  {' vs '.join(levels)}, {deals} deals: " + "; ".join(parts)


TIMED = frozenset({"expert"})
"""Levels whose every decision in the tournaments is timed and reported."""


def decision_times(times: dict[str, list[float]]) -> str:
    """Median, p90, p99 and worst decision time per level (ms), over every
    decision of the tournaments (forced ones included)."""
    lines = [
        "decision times in these games (every decision, classic 11 rounds), ms",
        "| level | decisions | median | p90 | p99 | worst |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for level, found in sorted(times.items()):
        values = sorted(found)
        p90, p99 = (values[min(len(values) - 1, int(q * len(values)))] for q in (0.9, 0.99))
        lines.append(
            f"| {level} | {len(values)} | {statistics.median(values):.1f} | {p90:.1f} | "
            f"{p99:.1f} | {values[-1]:.1f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Bot decision times and strength.")
    parser.add_argument("--strength", action="store_true", help="run the tournaments")
    parser.add_argument("--games", type=int, default=400, help="games per 2-player pairing")
    parser.add_argument(
        "--games-4p",
        type=int,
        default=1200,
        help="games of the 4-player table (its margin is small: 300 deals narrow the interval)",
    )
    parser.add_argument(
        "--expert-games",
        type=int,
        default=200,
        help="games per 2-player table with expert (full run; it decides 20-100 times slower)",
    )
    parser.add_argument(
        "--expert-games-4p", type=int, default=400, help="games of the 4-player table with expert"
    )
    parser.add_argument(
        "--expert-cpu",
        type=int,
        default=0,
        metavar="GAMES",
        help="only the expert's decision times in CPU and wall time over GAMES games a table",
    )
    parser.add_argument("--timing-games", type=int, default=6, help="games per seating (timing)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (strength)")
    parser.add_argument("--seed", default="bench", help="seed of the run")
    parser.add_argument(
        "--table",
        action="append",
        default=[],
        metavar="LEVELS",
        help="only this table (comma-separated levels, one per seat; repeatable), "
        "with the decision times of expert; no timing games",
    )
    parser.add_argument(
        "--only-expert",
        action="store_true",
        help="only the tables with expert (2 players against basic and strong, 4 players), "
        "with its decision times; no timing games",
    )
    parser.add_argument("--write", metavar="PATH", help="also write the tables to this file")
    args = parser.parse_args(argv)
    machine = (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    print(f"machine: {machine}")
    report = f"Machine: {machine}.\n"
    if args.expert_cpu:
        print(expert_cpu(args.expert_cpu, args.seed), flush=True)
        return 0
    chosen = [tuple(t.split(",")) for t in args.table]
    if not args.only_expert and not chosen:
        times = timing(args.timing_games, args.seed)
        print(times + "\n", flush=True)
        report += f"\n{times}\n"
    if args.strength or args.only_expert or chosen:
        pairings = chosen or (EXPERT_PAIRINGS if args.only_expert else PAIRINGS)
        tables, took = strength(
            args.games,
            args.games_4p,
            args.seed,
            args.jobs,
            Options(),
            pairings,
            None if chosen or args.only_expert else (args.expert_games, args.expert_games_4p),
        )
        print(f"strength: {took:.0f} s with {args.jobs} processes")
        report += (
            f"\nStrength: full 11-round classic games, seed `{args.seed}`, seats rotating, "
            f"{args.jobs} processes, {took:.0f} s in all.\n\n{tables}\n"
        )
    if args.write:
        Path(args.write).write_text(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
