"""The real-time benchmark's figures: per run, medians per N, the table, the JSON.

CPU figures are percent of one core over the moves phase (the machine has
``os.cpu_count()`` cores): ``gunicorn`` (master and workers), ``redis``,
``movers`` (this process: the players, the probe, the orchestration) and
``gen`` (the busiest waiter process), so a reader sees whether the generator
or the server ran out of CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench._rt_check import percentile


def figures(run: dict[str, Any]) -> dict[str, Any]:
    """One run's figures (what the table shows)."""
    n = run["waiters"]
    delivery = run["delivery_ms"]["poll"] + run["delivery_ms"]["sse"]
    samples = run["samples"]
    cpu = run["cpu_percent"]
    gens = [v for k, v in cpu.items() if k.startswith("waiters")]
    redis = [run.get(k, {}) for k in ("redis_idle", "redis_waiting", "redis_moving")]
    per_process = [v for r in redis for k, v in r.get("per_process", {}).items() if k != "other"]
    return {
        "n": n,
        "games": run["games"],
        "connected": run["connected"],
        "violations": sum(run["violations"].values()),
        "behind": run.get("behind_at_end", 0),
        "waiter_errors": sum(run.get("waiter_errors_waiting", {}).values()),
        "mover_errors": sum(run["mover_errors"].values()),
        "deliver_p50": percentile(delivery, 0.5),
        "deliver_p99": percentile(delivery, 0.99),
        "poll_p99": percentile(run["delivery_ms"]["poll"], 0.99),
        "sse_p99": percentile(run["delivery_ms"]["sse"], 0.99),
        "deliveries": len(delivery),
        "move_p50": percentile(samples["move"], 0.5),
        "move_p99": percentile(samples["move"], 0.99),
        "read_p50": percentile(samples["read"], 0.5),
        "read_p99": percentile(samples["read"], 0.99),
        "probe_p99": percentile(samples["probe"], 0.99),
        "redis_conns": max(r.get("total", 0) for r in redis),
        "redis_per_worker": max(per_process, default=0),
        "kb_per_waiter": (run["rss_waiting_kb"] - run["rss_idle_kb"]) / n if n else float("nan"),
        "moves_per_s": run["moves_per_s"],
        "cpu_gunicorn": cpu["gunicorn"],
        "cpu_redis": cpu["redis"],
        "cpu_movers": cpu["movers"],
        "cpu_gen": max(gens, default=0.0),
    }


NUMERIC_MEDIAN = (
    "deliver_p50", "deliver_p99", "poll_p99", "sse_p99", "deliveries", "move_p50", "move_p99",
    "read_p50", "read_p99", "probe_p99", "redis_conns", "redis_per_worker", "kb_per_waiter",
    "moves_per_s", "waiter_errors", "mover_errors", "cpu_gunicorn", "cpu_redis", "cpu_movers",
    "cpu_gen",
)  # fmt: skip


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per N: medians over its repeats (connected: the least; violations: the sum)."""
    by_n: dict[int, list[dict[str, Any]]] = defaultdict(list)
    broken: dict[int, list[str]] = defaultdict(list)
    for run in runs:
        if "broken" in run:
            broken[run["waiters"]].append(run["broken"])
        else:
            by_n[run["waiters"]].append(figures(run))
    rows = []
    for n in sorted(broken.keys() - by_n.keys()):
        rows.append({"n": n, "broken": broken[n], "line": f"N={n}: broke: {broken[n][0]}"})
    for n, group in sorted(by_n.items()):
        row: dict[str, Any] = {"n": n, "repeats": len(group), "games": group[0]["games"]}
        row["connected"] = min(f["connected"] for f in group)
        row["violations"] = sum(f["violations"] for f in group)
        row["behind"] = sum(f["behind"] for f in group)
        for name in NUMERIC_MEDIAN:
            values = [f[name] for f in group if f[name] == f[name]]  # drop NaN
            row[name] = statistics.median(values) if values else float("nan")
        notes = {r.get("capacity_note") for r in runs if r["waiters"] == n} - {"", None}
        row["notes"] = sorted(notes) + [f"a repeat broke: {b}" for b in broken[n]]
        row["line"] = _line(row)
        rows.append(row)
    return rows


def _line(row: dict[str, Any]) -> str:
    return (
        f"N={row['n']}: connected {row['connected']}, violations {row['violations']} "
        f"(+{row['behind']} not delivered by the end), "
        f"delivery p50/p99 {row['deliver_p50']:.1f}/{row['deliver_p99']:.1f} ms, "
        f"moves p99 {row['move_p99']:.1f} ms, reads p99 {row['read_p99']:.1f} ms, "
        f"redis conns {row['redis_conns']:.0f}, {row['kb_per_waiter']:.1f} KB/waiter, "
        f"{row['moves_per_s']:.0f} moves/s, CPU gunicorn {row['cpu_gunicorn']:.0f}% "
        f"redis {row['cpu_redis']:.0f}% generator {row['cpu_gen']:.0f}%"
    )


def print_table(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    print()
    print(
        f"Real-time: {args.moves_per_second:g} moves/s for {args.duration:g} s while N clients "
        f"wait (~{args.sse_share:.0%} SSE, ~{args.seat_share:.0%} with a seat token); "
        f"medians of {args.repeats} repeat(s); CPU in % of one core ({os.cpu_count()} cores)."
    )
    print()
    head = (
        "| N | games | connected | violations (not delivered by the end) "
        "| delivery p50 / p99 ms | poll / SSE p99 ms "
        "| errors waiters / movers | moves p50 / p99 ms | reads p50 / p99 ms | /readyz p99 ms "
        "| Redis conns (max per worker) | KB per waiter | moves/s "
        "| CPU % gunicorn / redis / movers / generator |"
    )
    print(head)
    print("|" + "---|" * head.count(" | ") + "---|")
    for r in sorted(rows, key=lambda r: r["n"]):
        if "broken" in r:
            print(f"| {r['n']:,} | broke: {r['broken'][0][:150]} |")
            continue
        print(
            f"| {r['n']:,} | {r['games']:,} | {r['connected']:,} "
            f"| {r['violations']} ({r['behind']}) "
            f"| {r['deliver_p50']:.1f} / {r['deliver_p99']:.1f} "
            f"| {r['poll_p99']:.1f} / {r['sse_p99']:.1f} "
            f"| {r['waiter_errors']:.0f} / {r['mover_errors']:.0f} "
            f"| {r['move_p50']:.1f} / {r['move_p99']:.1f} "
            f"| {r['read_p50']:.1f} / {r['read_p99']:.1f} | {r['probe_p99']:.1f} "
            f"| {r['redis_conns']:.0f} ({r['redis_per_worker']:.0f}) | {r['kb_per_waiter']:.1f} "
            f"| {r['moves_per_s']:.0f} | {r['cpu_gunicorn']:.0f} / {r['cpu_redis']:.0f} / "
            f"{r['cpu_movers']:.0f} / {r['cpu_gen']:.0f} |"
        )
    for r in rows:
        for note in r.get("notes", []):
            print(f"NOTE: {note}")


def write_json(
    path: Path, args: argparse.Namespace, runs: list[dict[str, Any]], rows: list[dict[str, Any]]
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    slim = []
    for run in runs:  # the raw samples are summarized, not kept
        kept = {k: v for k, v in run.items() if k not in ("samples", "delivery_ms")}
        if "broken" not in run:
            kept["figures"] = figures(run)
        slim.append(kept)
    meta = {"args": {k: str(v) for k, v in vars(args).items()}, "cpus": os.cpu_count()}
    meta["python"] = platform.python_version()
    path.write_text(json.dumps({"meta": meta, "rows": rows, "runs": slim}, indent=1, default=str))
