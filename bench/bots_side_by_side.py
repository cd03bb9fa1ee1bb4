"""Side by side for bot games: the same seeded games played by two variants that
differ only by environment variables, in turn.

    .venv/bin/python bench/bots_side_by_side.py --a SOLVER=c --b SOLVER=python

Each run is a fresh process (``--child``) with the variant's variables set on
top of this environment: it reads them as the service does
(:meth:`service.config.Config.from_env`, applied to the engine as
``create_app`` applies them), then plays ``--games`` seeded games per seating
of three levels (strong, basic, random: classic rules, 11 rounds) and times
every decision.  The variants play the very same games (the bots' choices come
from the seed, and a variant changes speed, never an answer: the run checks the
final totals match).  Runs alternate A B, then B A on the next repeat, so that
a shared machine's drift falls on both alike.  Printed per measure: the
medians over repeats of A and B and the median of the paired ratios B/A, with
how many pairs went each way.  A run's measures: games per second (wall time of
the whole run) and, per level, the median decision time (ms) over all hands
and over the late rounds' (``_late``: 10 cards or more in hand, where the
solver's work grows).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.side_by_side import variables  # noqa: E402
from service.bots import LEVELS  # noqa: E402
from service.bots.simulate import game_seed, play_game  # noqa: E402
from service.config import Config  # noqa: E402
from service.engine import byte_cache  # noqa: E402
from service.engine.options import Options  # noqa: E402
from service.engine.solver import switch as solver_switch  # noqa: E402

SEATINGS = (("strong", "basic", "random"), ("basic", "random", "strong"))


def child(games: int, seed: str) -> dict[str, Any]:
    """One run in this process, configured from its environment."""
    config = Config.from_env()
    solver_switch.use_c(config.solver == "C")  # as create_app does
    byte_cache.configure(config.bot_cache_mb << 20)
    samples: dict[str, list[tuple[int, float]]] = {level: [] for level in LEVELS}
    totals = []
    started = time.perf_counter()
    for i in range(games):
        for levels in SEATINGS:
            out = play_game(levels, Options(), game_seed(f"ab:{seed}", i), timed=True)
            totals.append(out.totals)
            for level, size, seconds in out.decision_times:
                samples[level].append((size, seconds * 1000))
    took = time.perf_counter() - started
    run: dict[str, Any] = {"games_per_s": len(totals) / took, "totals": totals}
    for level in LEVELS:
        run[f"{level}_ms"] = statistics.median(ms for _, ms in samples[level])
        run[f"{level}_ms_late"] = statistics.median(ms for n, ms in samples[level] if n >= 10)
    return run


def one_run(env: dict[str, str], games: int, seed: str) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", "--games", str(games), "--seed", seed]
    out = subprocess.run(
        cmd, env={**os.environ, **env}, check=True, capture_output=True, text=True, cwd=ROOT
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", nargs="*", default=[], metavar="NAME=value", help="variant A")
    parser.add_argument("--b", nargs="*", default=[], metavar="NAME=value", help="variant B")
    parser.add_argument("--repeats", type=int, default=5, help="paired runs")
    parser.add_argument("--games", type=int, default=2, help="games per seating in a run")
    parser.add_argument("--seed", default="bench")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.games, args.seed)))
        return 0
    env = {"a": variables(args.a), "b": variables(args.b)}
    labels = {v: " ".join(f"{k}={x}" for k, x in env[v].items()) or "(as is)" for v in env}
    runs: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
    for rep in range(args.repeats):
        for variant in ("a", "b") if rep % 2 == 0 else ("b", "a"):
            run = one_run(env[variant], args.games, args.seed)
            runs[variant].append(run)
            print(
                f"repeat {rep + 1} {variant.upper()}: {run['games_per_s']:.3f} games/s, "
                + ", ".join(f"{level} {run[f'{level}_ms']:.2f} ms" for level in LEVELS),
                flush=True,
            )
    if any(r["totals"] != runs["a"][0]["totals"] for r in runs["a"] + runs["b"]):
        print("the variants' games differ: not the same games", file=sys.stderr)
        return 1
    fields = ["games_per_s", *(f"{lv}_ms{late}" for lv in LEVELS for late in ("", "_late"))]
    print(
        f"\nA: {labels['a']}\nB: {labels['b']}\n{args.repeats} paired runs, "
        f"{2 * args.games} games each ({len(SEATINGS)} seatings, 3 players, 11 rounds)\n"
    )
    print("| measure | A | B | B/A (median of pairs) | pairs B>A |")
    print("|---|---:|---:|---:|---:|")
    for field in fields:
        a = statistics.median(r[field] for r in runs["a"])
        b = statistics.median(r[field] for r in runs["b"])
        ratios = [rb[field] / ra[field] for ra, rb in zip(runs["a"], runs["b"], strict=True)]
        up = sum(x > 1 for x in ratios)
        print(
            f"| {field} | {a:.3f} | {b:.3f} | {statistics.median(ratios):.3f} | "
            f"{up}/{len(ratios)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
