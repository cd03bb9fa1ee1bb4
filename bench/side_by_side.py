"""Side by side: two instances of the service that differ only by environment variables
(or by the checkout they serve: ``--a-tree``, ``--b-tree``).

    .venv/bin/python bench/side_by_side.py --a FAST_LANE=true --b FAST_LANE=false
    .venv/bin/python bench/side_by_side.py --a-tree ../previous-release
    .venv/bin/python bench/side_by_side.py --replicas 1 \
        --a REDIS_WAIT_REPLICAS=0 --b REDIS_WAIT_REPLICAS=1 --scenarios moves

One run starts a throwaway ``redis-server``, stores the HTTP benchmark's games
in it (2-player games at the start of their last round, ``bench/_games.py``)
(with ``--replicas N``, N replicas of it are started first and kept in sync:
what ``REDIS_WAIT_REPLICAS`` waits for; their CPU is not counted) and starts
the service twice under gunicorn (``deploy/gunicorn.conf.py``,
``RATE_LIMITS=false``, as ``make bench-http``): variant A with the ``--a``
variables, variant B with the ``--b`` ones, both on that Redis and those games.
Only one is loaded at a time, in short runs interleaved scenario by scenario
(A B, then B A on the next repeat, and so on), so that the drift of a shared
machine falls on both alike.  Each run is measured by its load generator
(``wrk`` with the benchmark's Lua script, else the Python one: req/s, p99) and
by the CPU the variant's gunicorn processes and the Redis server spent during
it (user + system, from ``/proc``), per request: on a noisy machine the CPU
per request is the steadier figure.

For each scenario it prints the medians of A and B and the median over repeats
of the paired ratios B/A (req/s, p99, CPU per request) with how many pairs
went each way, and writes them with
every run to ``bench/results/side_by_side.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bench._games import create_hot_games, refresh  # noqa: E402
from bench._load import run_measured  # noqa: E402
from bench.http_bench import Target, serve, start_redis  # noqa: E402
from harness.gunicorn_server import SERVICE_APP, GunicornServer  # noqa: E402
from harness.redis_replication import start_replica  # noqa: E402
from harness.redis_server import RedisServer  # noqa: E402
from service.store import GameStore  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SCENARIOS = ("public_view", "player_view", "not_modified", "moves")
PLAYED = ("moves", "not_modified")
"""Scenarios whose load needs the games' versions, turns and phases read back first."""


def variables(pairs: list[str]) -> dict[str, str]:
    """``["NAME=value", ...]`` as a dict (an argparse type would take one at a time)."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            sys.exit(f"expected NAME=value, got {pair!r}")
        out[name] = value
    return out


def _tree_label(tree: Path) -> list[str]:
    """How a variant's checkout is named in the table: nothing for this one."""
    return [] if tree == ROOT else [f"tree={tree}"]


def measure(
    scenario: str, target: Target, args: argparse.Namespace, work: Path, seconds: float
) -> dict[str, Any]:
    """One run of ``scenario`` on ``target``, with the servers' CPU per request."""
    if scenario in PLAYED:
        refresh(target.client, target.games)
    out = run_measured(scenario, target, args, work, seconds, wrk=bool(args.wrk))
    cpu_ms = out.get("server_cpu_ms", math.nan) + out.get("redis_cpu_ms", math.nan)
    out["cpu_us"] = cpu_ms * 1000
    return out


def paired(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Medians of A and B, and the medians of the paired ratios B/A."""

    def median(variant: str, field: str) -> float:
        return statistics.median(r[field] for r in runs[variant])

    def ratio(field: str) -> float:
        return statistics.median(
            b[field] / a[field] for a, b in zip(runs["a"], runs["b"], strict=True) if a[field]
        )

    out: dict[str, Any] = {"repeats": len(runs["a"])}
    for field in ("rps", "p99_ms", "cpu_us"):
        out[field] = {"a": median("a", field), "b": median("b", field), "b_over_a": ratio(field)}
    pairs = list(zip(runs["a"], runs["b"], strict=True))
    # how many pairs went each way: a median ratio from a few lopsided pairs shows here
    out["b_slower"] = sum(b["rps"] < a["rps"] for a, b in pairs)
    out["b_costlier"] = sum(b["cpu_us"] > a["cpu_us"] for a, b in pairs)
    out["bad"] = {v: sum(r["bad"] for r in runs[v]) for v in ("a", "b")}
    return out


def table(label_a: str, label_b: str, results: dict[str, dict[str, Any]]) -> str:
    lines = [
        f"A: {label_a}  |  B: {label_b}",
        "",
        "| scenario | A req/s | B req/s | B/A req/s | p99 A ms | p99 B ms | B/A p99 "
        "| CPU A µs/req | CPU B µs/req | B/A CPU | pairs B slower / costlier |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario, r in results.items():
        rps, p99, cpu = r["rps"], r["p99_ms"], r["cpu_us"]
        bad = "" if not any(r["bad"].values()) else " (bad A {a}, B {b})".format(**r["bad"])
        lines.append(
            f"| {scenario}{bad} | {rps['a']:.0f} | {rps['b']:.0f} | {rps['b_over_a']:.3f} "
            f"| {p99['a']:.1f} | {p99['b']:.1f} | {p99['b_over_a']:.3f} "
            f"| {cpu['a']:.0f} | {cpu['b']:.0f} | {cpu['b_over_a']:.3f} "
            f"| {r['b_slower']} / {r['b_costlier']} of {r['repeats']} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", nargs="*", default=[], metavar="NAME=value", help="variant A")
    parser.add_argument("--b", nargs="*", default=[], metavar="NAME=value", help="variant B")
    parser.add_argument(
        "--a-tree", type=Path, default=ROOT, help="checkout served as A (installed, C built)"
    )
    parser.add_argument("--b-tree", type=Path, default=ROOT, help="checkout served as B")
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--repeats", type=int, default=7, help="paired runs per scenario")
    parser.add_argument("--duration", type=int, default=2, help="seconds per run (whole: wrk)")
    parser.add_argument("--games", type=int, default=500, help="games the load cycles over")
    parser.add_argument("--templates", type=int, default=25, help="distinct played games")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--generator", choices=("auto", "wrk", "python"), default="auto")
    parser.add_argument("--replicas", type=int, default=0, help="replicas of the redis-server")
    parser.add_argument("--out", type=Path, default=RESULTS / "side_by_side.json")
    args = parser.parse_args()
    env = {"a": variables(args.a), "b": variables(args.b)}
    if env["a"] == env["b"] and args.a_tree == args.b_tree:
        print("note: A and B have the same variables (an A/A run)", file=sys.stderr)
    args.wrk = shutil.which("wrk") if args.generator != "python" else None
    if args.generator == "wrk" and not args.wrk:
        sys.exit("wrk not found: apt-get install -y wrk")
    trees = {"a": args.a_tree.resolve(), "b": args.b_tree.resolve()}
    labels = {
        v: " ".join([*(f"{k}={x}" for k, x in env[v].items()), *_tree_label(trees[v])]) or "(as is)"
        for v in env
    }

    work = RESULTS / "work"
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    def log(msg: str) -> None:
        print(f"[{time.monotonic() - started:6.1f}s] {msg}", flush=True)

    procs: list[GunicornServer | RedisServer] = []
    try:
        store = start_redis()
        procs.append(store)
        for _ in range(args.replicas):
            procs.append(start_replica(store))
            log(f"replica of redis-server :{store.port} on :{procs[-1].port}, in sync")
        client = redis.Redis.from_url(store.url)
        games = create_hot_games(GameStore(client), args.games, args.templates)
        log(f"{len(games)} games stored on redis-server :{store.port}")
        targets = {}
        for variant in ("a", "b"):
            name = f"variant-{variant}"
            server = serve(
                name, SERVICE_APP, store, args.workers, work, env[variant], trees[variant]
            )
            procs.append(server)
            targets[variant] = Target(variant, server, store, client, games)
            log(f"variant {variant.upper()} on :{server.port}: {labels[variant]}")

        for scenario in args.scenarios:  # warm both up: imports, caches, connections
            for variant in ("a", "b"):
                measure(scenario, targets[variant], args, work, 1)
        log(f"warmed up; generator {'wrk' if args.wrk else 'python'}")

        runs = {s: {"a": [], "b": []} for s in args.scenarios}
        for rep in range(args.repeats):
            order = ("a", "b") if rep % 2 == 0 else ("b", "a")
            for scenario in args.scenarios:
                for variant in order:
                    r = measure(scenario, targets[variant], args, work, args.duration)
                    runs[scenario][variant].append(r)
                    log(
                        f"rep {rep + 1}/{args.repeats} {scenario:12s} {variant.upper()} "
                        f"{r['rps']:7.0f} req/s  p99 {r['p99_ms']:6.1f} ms  "
                        f"cpu {r['cpu_us']:6.0f} µs/req  bad {r['bad']}"
                    )
    finally:
        for proc in reversed(procs):
            proc.stop()

    results = {s: paired(runs[s]) for s in args.scenarios}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        k: getattr(args, k)
        for k in ("repeats", "duration", "games", "workers", "connections", "replicas")
    }
    meta["generator"] = "wrk" if args.wrk else "python"
    meta["when"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    args.out.write_text(
        json.dumps({"a": env["a"], "b": env["b"], "meta": meta, "scenarios": results, "runs": runs})
    )
    print()
    print(table(labels["a"], labels["b"], results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
