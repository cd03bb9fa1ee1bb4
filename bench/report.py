"""Chart and markdown table of the HTTP benchmark (``bench/results/http.json``).

    .venv/bin/python bench/report.py [--in bench/results/http.json]

Writes ``bench/results/http.png`` (requests per second of every scenario as a
share of the plain Flask ceiling measured in the same run: a monitor, no target)
and ``bench/results/http.md`` (the figures table and the Redis, memory, scale
and view-cost figures).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._summary import hand_sizes, view_cost_verdict  # noqa: E402

RESULTS = ROOT / "bench" / "results"
LABELS = {
    "ceiling": "plain Flask\n(ceiling)",
    "public_view": "public view",
    "player_view": "player view",
    "not_modified": "conditional GET\n(304)",
    "moves": "moves\n(draw/discard)",
}


def chart(data: dict[str, Any], out: Path) -> None:
    scenarios = data["scenarios"]
    names = list(scenarios)
    ratios = [scenarios[n]["ratio"] * 100 for n in names]
    rps = [scenarios[n]["rps"] for n in names]
    # red: a scenario that had unexpected answers
    colors = ["#d62728" if scenarios[n]["bad"] else "#1f77b4" for n in names]
    fig, ax = plt.subplots(figsize=(max(8.5, 1.45 * len(names)), 4.8), dpi=120)
    bars = ax.bar([LABELS.get(n, n) for n in names], ratios, color=colors, width=0.6)
    for bar, value, r in zip(bars, rps, ratios, strict=True):
        ax.text(
            bar.get_x() + bar.get_width() / 2,
            r - 1.5,
            f"{r:.0f}%\n{value:,.0f}\nreq/s",
            ha="center",
            va="top",
            fontsize=8,
            color="white",
            fontweight="bold",
        )
    meta = data["meta"]
    ax.set_ylabel("throughput, % of the plain Flask ceiling")
    ax.set_ylim(0, 125)
    ax.set_title(
        f"HTTP throughput vs the plain Flask ceiling ({meta['generator']}, "
        f"gunicorn {meta['workers']} {meta['worker']} workers, {meta['cpus']} CPUs; "
        f"median of {meta['repeats']} x {meta['duration_s']:g} s)",
        fontsize=9,
    )
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def table(data: dict[str, Any]) -> str:
    meta = data["meta"]
    lines = [
        f"Load generator `{meta['generator']}`, {meta['connections']} keep-alive connections on "
        f"loopback; gunicorn `deploy/gunicorn.conf.py` with {meta['workers']} {meta['worker']} "
        "workers for both the service and the plain Flask ceiling; "
        f"{meta['cpus']} CPUs; median of {meta['repeats']} runs of {meta['duration_s']:g} s each; "
        f"games: {meta['games']:,}, {meta['game_kind']}. Each scenario run sits between two runs "
        'of the ceiling; "% of ceiling" is the median of its ratios to their mean.',
        "",
        "| scenario | req/s | p50 ms | p99 ms | % of ceiling | CPU ms/req (gunicorn) "
        "| % of ceiling by CPU | unexpected answers |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in data["scenarios"].items():
        by_cpu = f"{r['cpu_ratio']:.0%}" if r.get("cpu_ratio") else "–"
        bad = f"**{r['bad']}**" if r["bad"] else "0"
        lines.append(
            f"| {LABELS.get(name, name).replace(chr(10), ' ')} | {r['rps']:,.0f} | "
            f"{r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['ratio']:.0%} | "
            f"{r.get('server_cpu_ms', 0):.2f} | {by_cpu} | {bad} |"
        )
    t = data["round_trips"]
    rt_ok = t["round_trips_per_move"] <= t["target"]
    lines += [
        "",
        "| measure | value | target | result |",
        "|---|---|---|---|",
        f"| Redis round trips per move (INFO commandstats) | {t['round_trips_per_move']:.2f} "
        f"(socket reads {t['socket_reads_per_move']:.2f}; commands incl. Lua's: "
        + ", ".join(f"{k} {v:g}" for k, v in t["commands_per_move"].items())
        + f") | ≤ {t['target']:g} | {'PASS' if rt_ok else '**FAIL**'} |",
    ]
    for players, b in data["bytes_per_game"].items():
        lines.append(
            f"| bytes per game in Redis, {players} players, last round | {b['total_bytes']:,} "
            f"(state {b['state_bytes']:,}, {b['events']:,} events {b['events_bytes']:,}) "
            "| reported | – |"
        )
    s = data["scale"]
    for name, r in s["by_scenario"].items():
        lines.append(
            f"| {s['games_small']:,} vs {s['games_large']:,} stored games, {name} | "
            f"{r['rps_small']:,.0f} → {r['rps_large']:,.0f} req/s (median of paired runs "
            f"{r['diff']:+.1%}"
            + (f"; CPU per request {r['cpu_diff']:+.1%}" if r.get("cpu_diff") is not None else "")
            + ") | < 10% | "
            f"{'PASS' if r['pass'] else '**FAIL**'} |"
        )
    v = data["view_cost"]
    target_ms, view_ok = view_cost_verdict(v)
    lines.append(
        f"| `observe(state, seat)`, {hand_sizes(v)}-card hands "
        f"({v['positions']} positions) | median {v['observe']['median_ms']:.3f} ms, p99 "
        f"{v['observe']['p99_ms']:.3f} ms (legal moves {v['legal_moves']['median_ms']:.3f}, "
        f"arrangement {v['arrangement']['median_ms']:.3f}) | p99 < "
        f"{target_ms:g} ms | {'PASS' if view_ok else '**FAIL**'} |"
    )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--in", dest="src", type=Path, default=RESULTS / "http.json")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not args.src.exists():
        sys.exit(f"{args.src} not found: run `make bench-http` first")
    data = json.loads(args.src.read_text())
    args.out_dir.mkdir(parents=True, exist_ok=True)
    chart(data, args.out_dir / "http.png")
    (args.out_dir / "http.md").write_text(table(data))
    print(f"wrote {args.out_dir / 'http.png'} and {args.out_dir / 'http.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
