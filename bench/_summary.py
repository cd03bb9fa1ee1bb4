"""Summary of the HTTP benchmark: medians, ratios to the ceiling, verdicts, the table.

``summarize`` takes the medians of a scenario's runs; ``scenario_results`` adds
the ratios to the ceiling (a monitor: no target) and whether any answer was
unexpected, ``scale_results`` the verdict against ``MAX_SCALE_DIFF``,
``with_view_cost_verdict`` the verdict of a seat view's cost against
``VIEW_COST_TARGET_MS``; ``passed`` is the overall verdict (the exit status):
no unexpected answer, those two and the Redis round trips per move against
``MAX_ROUND_TRIPS_PER_MOVE``.  ``write_json`` writes ``bench/results/http.json`` (read by
``bench/report.py``) and ``print_table`` prints it at the end of a run.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from bench._redis_stats import MAX_ROUND_TRIPS_PER_MOVE

MAX_SCALE_DIFF = 0.10
VIEW_COST_TARGET_MS = 1.0
"""A seat's view (arrangement and legal moves included) must cost "well under a
millisecond": its p99 must be below this."""


def server_cost(run: dict[str, Any]) -> float:
    """CPU milliseconds the servers (gunicorn and Redis) spent per request."""
    return float(run.get("server_cpu_ms", 0.0) + run.get("redis_cpu_ms", 0.0))


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "rps": statistics.median(r["rps"] for r in runs),
        "p50_ms": statistics.median(r["p50_ms"] for r in runs),
        "p99_ms": statistics.median(r["p99_ms"] for r in runs),
        "bad": sum(r["bad"] for r in runs),
        "server_cpu_ms": statistics.median(r.get("server_cpu_ms", 0.0) for r in runs),
        "redis_cpu_ms": statistics.median(r.get("redis_cpu_ms", 0.0) for r in runs),
        "requests": sum(r["requests"] for r in runs),
        "runs": runs,
    }


def scenario_results(
    runs: dict[str, list[dict[str, Any]]],
    ratios: dict[str, list[float]],
    previous_ratios: dict[str, list[float]],
    cpu_ratios: dict[str, list[float]],
) -> dict[str, dict[str, Any]]:
    """Every scenario's medians and its ratio to the ceiling."""
    main_results = {m: summarize(r) for m, r in runs.items()}
    main_results["ceiling"]["ratio"] = 1.0
    for mode in ratios:
        res = main_results[mode]
        res["ratio"] = statistics.median(ratios[mode])
        res["ratios"] = ratios[mode]
        # for comparison with runs before the sandwich: to the ceiling before only
        res["ratio_to_previous"] = statistics.median(previous_ratios[mode])
        res["cpu_ratio"] = statistics.median(cpu_ratios[mode]) if cpu_ratios[mode] else None
    return main_results


def scale_results(
    main_results: dict[str, dict[str, Any]],
    large_runs: dict[str, list[dict[str, Any]]],
    scale_diffs: dict[str, list[float]],
    scale_cpu_diffs: dict[str, list[float]],
) -> dict[str, dict[str, Any]]:
    """Per scale scenario: req/s with few versus many stored games, and the verdict."""
    scale = {}
    for mode in large_runs:
        large_summary = summarize(large_runs[mode])
        diff = statistics.median(scale_diffs[mode])
        scale[mode] = {
            "rps_small": main_results[mode]["rps"],
            "rps_large": large_summary["rps"],
            # judged on the median of the paired differences: each pair ran
            # interleaved (ABBA), so the machine's drift cancels out
            "diff": diff,
            "diffs": scale_diffs[mode],
            # shown beside the verdict, not part of it: the servers' CPU per
            # request (gunicorn + Redis) on the large store over the small one,
            # median of the same pairs; steadier than req/s on a shared box
            "cpu_diff": (
                statistics.median(scale_cpu_diffs[mode]) if scale_cpu_diffs[mode] else None
            ),
            "bad_large": large_summary["bad"],
            "pass": abs(diff) < MAX_SCALE_DIFF and large_summary["bad"] == 0,
        }
    return scale


def passed(
    main_results: dict[str, dict[str, Any]],
    trips: dict[str, Any],
    scale: dict[str, dict[str, Any]],
    cost: dict[str, Any],
) -> bool:
    """Whether every target is met (the exit status)."""
    ok = all(r["bad"] == 0 for r in main_results.values())
    ok &= trips["round_trips_per_move"] <= MAX_ROUND_TRIPS_PER_MOVE
    ok &= all(s["pass"] for s in scale.values())
    ok &= view_cost_passed(cost)
    return ok


def view_cost_passed(cost: dict[str, Any]) -> bool:
    """A seat's view built under :data:`VIEW_COST_TARGET_MS` at its p99."""
    return bool(cost["observe"]["p99_ms"] < VIEW_COST_TARGET_MS)


def with_view_cost_verdict(cost: dict[str, Any]) -> dict[str, Any]:
    """``cost`` (:func:`bench._games.view_cost`) with its target and verdict, as
    ``http.json`` keeps them for ``bench/report.py``."""
    return {**cost, "target_p99_ms": VIEW_COST_TARGET_MS, "pass": view_cost_passed(cost)}


def view_cost_verdict(cost: dict[str, Any]) -> tuple[float, bool]:
    """``(target p99 ms, passed)`` as :func:`with_view_cost_verdict` kept them; for
    an ``http.json`` written before they were kept, today's target and verdict."""
    if "pass" in cost:
        return float(cost["target_p99_ms"]), bool(cost["pass"])
    return VIEW_COST_TARGET_MS, view_cost_passed(cost)


def hand_sizes(cost: dict[str, Any]) -> str:
    """The hand sizes of the view-cost positions, as ``14`` or ``13/14``."""
    return "/".join(map(str, cost["hand_sizes"]))


def write_json(result: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


def print_table(result: dict[str, Any]) -> None:
    meta = result["meta"]
    print(
        f"\nHTTP benchmark: {meta['generator']}, {meta['connections']} connections, gunicorn "
        f"{meta['workers']} {meta['worker']} workers, {meta['cpus']} CPUs, median of "
        f"{meta['repeats']} x {meta['duration_s']:g} s"
    )
    print(
        f"{'scenario':14s} {'req/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s} {'ratio':>7s} "
        f"{'by CPU':>7s}  paired ratios"
    )
    for mode, r in result["scenarios"].items():
        by_cpu = f"{r['cpu_ratio']:7.0%}" if r.get("cpu_ratio") else f"{'-':>7s}"
        paired = " ".join(f"{x:.0%}" for x in r.get("ratios", []))
        bad = f"  FAIL: {r['bad']} unexpected answers" if r["bad"] else ""
        print(
            f"{mode:14s} {r['rps']:8.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} "
            f"{r['ratio']:7.0%} {by_cpu}  {paired}{bad}"
        )
    print(
        "(ratio: median of req/s over the mean req/s of the ceiling runs just before and "
        "after; by CPU: "
        "median of the ceiling's server CPU per request (gunicorn + Redis) over the "
        "scenario's -- steadier on a shared box, same pairing)"
    )
    t = result["round_trips"]
    print(
        f"\nRedis round trips per move: {t['round_trips_per_move']:.2f} (target <= "
        f"{t['target']:g}; socket reads per move {t['socket_reads_per_move']:.2f}) "
        f"{'PASS' if t['round_trips_per_move'] <= t['target'] else 'FAIL'}"
    )
    print(f"  commands per move (commandstats, Lua's own calls included): {t['commands_per_move']}")
    for players, b in result["bytes_per_game"].items():
        print(
            f"Bytes per game, {players} players, last round: {b['total_bytes']:,} "
            f"(state {b['state_bytes']:,} incl. {b['document_bytes']:,}-byte document and "
            f"{b.get('results_bytes', 0):,} bytes of results; "
            f"{b['events']} events {b['events_bytes']:,})"
        )
    s = result["scale"]
    for mode, r in s["by_scenario"].items():
        print(
            f"{s['games_small']:,} vs {s['games_large']:,} games, {mode}: {r['rps_small']:.0f} -> "
            f"{r['rps_large']:.0f} req/s (median of paired runs {r['diff']:+.1%}: "
            + " ".join(f"{d:+.0%}" for d in r["diffs"])
            + (f"; CPU per request {r['cpu_diff']:+.1%}" if r.get("cpu_diff") is not None else "")
            + ") "
            f"{'PASS' if r['pass'] else 'FAIL'}"
        )
    v = result["view_cost"]
    target_ms, view_ok = view_cost_verdict(v)
    print(
        f"observe(state, seat), {hand_sizes(v)}-card hands, {v['positions']} positions: median "
        f"{v['observe']['median_ms']:.3f} ms, p99 {v['observe']['p99_ms']:.3f} ms "
        f"(legal_moves {v['legal_moves']['median_ms']:.3f} ms, best_arrangement "
        f"{v['arrangement']['median_ms']:.3f} ms; public view "
        f"{v['observe_public']['median_ms']:.3f} ms; target p99 < "
        f"{target_ms:g} ms) {'PASS' if view_ok else 'FAIL'}"
    )
