"""Player credentials beside seat tokens (issue 43): the player view and moves in
``AUTH_MODE=apps``, with player tokens and with seats' tokens, on one service.

One throwaway ``redis-server`` and one service under gunicorn (the service's
settings, ``AUTH_MODE=apps``, rate limits off), with an app made as the operator's
command makes it and two sets of ``--games`` 2-player games of that app at the start
of their last round (``bench/_games.py``, the games of ``bench/http_bench.py``):

* ``seat``:   seats taken with seats' tokens (``Authorization: Bearer <seat token>``);
* ``player``: seats bound to players of the app (two players of their own per game),
  each acting with a player token minted for it (``t13_pt_...``): every request
  also reads the player's hash (sent with the game's read, one round trip) and the
  app's record (cached half a second per worker).

Each repetition runs, for the player view and for moves, seat, player, player,
seat (the mirror on odd repetitions), so that a drift of the machine cancels out;
the figure is the median over repetitions of the player runs' CPU per request (the
gunicorn workers' and Redis's) over the seat runs', and the same of req/s. The issue's target:
a player credential costs at most 10% more than a seat's token.

    .venv/bin/python bench/player_credentials.py [--repeats 3] [--duration 3]

Writes bench/results/player_credentials.json. ``make bench-http`` runs it after
``bench/http_bench.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bench._games import clone, game_at_last_round, refresh  # noqa: E402
from bench._load import run_measured  # noqa: E402
from bench._summary import server_cost  # noqa: E402
from bench.http_bench import RESULTS, Target, serve, start_redis  # noqa: E402
from harness.gunicorn_server import SERVICE_APP, GunicornServer  # noqa: E402
from harness.redis_server import RedisServer  # noqa: E402
from service.hosting import apps, players  # noqa: E402
from service.hosting.snapshots import events_payload, snapshot  # noqa: E402
from service.hosting.tokens import new_game_id  # noqa: E402
from service.store import GameStore  # noqa: E402

MODES = ("player_view", "moves")
TARGET = 0.10
"""A player credential's cost over a seat token's, at most (issue 43)."""


def app_games(
    store: GameStore, app_id: str, count: int, templates: int, bound: bool
) -> list[dict[str, Any]]:
    """``count`` games of ``app_id`` at their last round: seats with seat tokens, or
    (``bound``) bound to two players of their own each, with a token minted for each."""
    bases = [game_at_last_round(2) for _ in range(templates)]
    games = []
    for i in range(count):
        template, _tokens, template_events = bases[i % templates]
        record, tokens, events = clone(template, template_events)
        record.id = new_game_id(app_id)
        if bound:
            for seat in record.seats:
                player_id = f"g{i}s{seat.seat}"
                seat.token_hash = players.player_holder(app_id, player_id)
                tokens[seat.seat], _ = players.mint(
                    store.apps, app_id, player_id, f"p{seat.seat}", 86400
                )
        store.create(record.id, record.to_bytes(), events_payload(events), **snapshot(record, 1))
        games.append({"id": record.id, "n": 2, "tokens": [tokens[0], tokens[1]]})
    return games


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--games", type=int, default=500, help="games of each set")
    parser.add_argument("--templates", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--out", type=Path, default=RESULTS / "player_credentials.json")
    args = parser.parse_args()
    args.wrk = shutil.which("wrk")
    work = RESULTS / "work"
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    procs: list[GunicornServer | RedisServer] = []
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {
        m: {"seat": [], "player": []} for m in MODES
    }
    cost_ratios: dict[str, list[float]] = {m: [] for m in MODES}
    rps_ratios: dict[str, list[float]] = {m: [] for m in MODES}

    def log(msg: str) -> None:
        print(f"[{time.monotonic() - started:6.1f}s] {msg}", flush=True)

    try:
        redis_proc = start_redis()
        procs.append(redis_proc)
        client = redis.Redis.from_url(redis_proc.url)
        store = GameStore(client)
        app, _key = apps.create_app_record(store.apps, "bench")
        sets = {
            "seat": app_games(store, app.id, args.games, args.templates, bound=False),
            "player": app_games(store, app.id, args.games, args.templates, bound=True),
        }
        env = {"AUTH_MODE": "apps"}
        server = serve("service-apps", SERVICE_APP, redis_proc, args.workers, work, env)
        procs.append(server)
        targets = {name: Target(name, server, redis_proc, client, g) for name, g in sets.items()}
        log(f"app {app.id}: {args.games} games with seat tokens, {args.games} with players'")

        def run(mode: str, name: str, seconds: float) -> dict[str, Any]:
            target = targets[name]
            refresh(client, target.games)
            wrk = args.wrk is not None
            result = run_measured(mode, target, args, work, seconds, wrk=wrk)
            if result["bad"] > result["requests"] // 100:  # a game that ended, at most
                raise SystemExit(f"{mode} with {name} credentials: {result['bad']} bad answers")
            return result

        for mode in MODES:  # warm up
            for name in targets:
                run(mode, name, min(2.0, args.duration))
        for rep in range(args.repeats):
            for mode in MODES:
                order = ["seat", "player", "player", "seat"]
                if rep % 2:
                    order.reverse()
                done: dict[str, list[dict[str, Any]]] = {"seat": [], "player": []}
                for name in order:
                    result = run(mode, name, args.duration)
                    done[name].append(result)
                    runs[mode][name].append(result)
                    log(
                        f"rep {rep + 1}/{args.repeats} {mode:12s} {name:6s} "
                        f"{result['rps']:8.0f} req/s  p99 {result['p99_ms']:6.2f} ms  "
                        f"gunicorn {result.get('server_cpu_ms', 0):.3f} ms/req  "
                        f"bad {result['bad']}"
                    )
                seat_cost = statistics.mean(server_cost(r) for r in done["seat"])
                player_cost = statistics.mean(server_cost(r) for r in done["player"])
                cost_ratios[mode].append(player_cost / seat_cost - 1)
                seat_rps = statistics.mean(r["rps"] for r in done["seat"])
                player_rps = statistics.mean(r["rps"] for r in done["player"])
                rps_ratios[mode].append(1 - player_rps / seat_rps)
    finally:
        for proc in reversed(procs):
            proc.cleanup()

    summary = {
        mode: {
            "seat_rps": statistics.median(r["rps"] for r in runs[mode]["seat"]),
            "player_rps": statistics.median(r["rps"] for r in runs[mode]["player"]),
            "cpu_more": statistics.median(cost_ratios[mode]),
            "rps_less": statistics.median(rps_ratios[mode]),
        }
        for mode in MODES
    }
    print(f"\n{'scenario':12s} {'seat req/s':>11s} {'player req/s':>13s} {'CPU/req':>9s}")
    for mode, s in summary.items():
        print(
            f"{mode:12s} {s['seat_rps']:11.0f} {s['player_rps']:13.0f} {s['cpu_more']:+9.1%}"
            f"   (req/s {-s['rps_less']:+.1%})"
        )
    meta = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "generator": "wrk" if args.wrk else "python",
        "workers": args.workers,
        "connections": args.connections,
        "repeats": args.repeats,
        "duration_s": args.duration,
        "games": args.games,
        "target_cpu_more": TARGET,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": meta, "scenarios": summary, "runs": runs}, indent=2))
    within = all(s["cpu_more"] <= TARGET for s in summary.values())
    print(f"player credentials within {TARGET:.0%} of seat tokens: {'yes' if within else 'no'}")
    return 0  # a benchmark reports; the tests assert


if __name__ == "__main__":
    sys.exit(main())
