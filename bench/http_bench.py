"""HTTP benchmark of the service against the ceiling of its own stack (issue 7).

One run starts a throwaway ``redis-server`` (free port, no persistence, stopped
by PID), the service under gunicorn (``deploy/gunicorn.conf.py``, ``REDIS_URL``
pointing at that Redis) and ``bench/flask_ceiling.py`` -- a plain Flask app
answering a small JSON object -- under gunicorn with the SAME settings.  Both
stay up, but only one is loaded at a time: the ceiling runs first, then each
repetition runs every service scenario followed by the ceiling again.  A
scenario's ratio is the median over repetitions of its req/s divided by the
mean req/s of the ceiling runs just before and just after it (every scenario
run sits between two ceiling runs), so the machine's drift (these are
noisy shared boxes) cancels out.

Scenarios (all on loopback, closed loop, ``--connections`` keep-alive
connections, one per load-generator thread):

* ``ceiling``       GET / of the plain Flask app;
* ``public_view``   GET /v1/games/{id}, cycling over the games;
* ``player_view``   GET /v1/games/{id}/view with a seat's bearer token;
* ``not_modified``  GET /v1/games/{id} with ``If-None-Match`` of the current version (304);
* ``moves``         POST /v1/games/{id}/moves: draw from the stock, then discard a
                    card of the deadwood the draw's answer shows (as a player
                    would; the hand's first card when it all melds), game after game.

The ratios are a monitor, with no target: the run fails only on an unexpected
answer, on more Redis round trips per move than allowed, on a scale difference
of 10% or more, or on a seat view costing 1 ms or more at its p99.

The games are 2-player games at the start of the LAST round (13-card hands,
14 after a draw, ten rounds of results in every view): the most expensive
views the classic game has.  They are built in-process with the engine and
stored through ``GameStore.create``: copies of ``--templates`` played games,
each with a new id, new tokens and the last round dealt again from a seed of
its own, so that no two games hold the same hands.

The load generator is ``wrk`` (Debian package ``wrk``) with a Lua script; the
same wrk settings and the same script (request() and response() callbacks)
drive the ceiling, so every ratio compares like with like.  Without wrk, a
Python generator (threads, http.client keep-alive) is used for every
scenario, ceiling included; its absolute figures are lower because it
competes with the servers for the CPU.

Also measured: Redis round trips per move (INFO commandstats and INFO stats
before/after the move runs), bytes per game in Redis (MEMORY USAGE of the
state hash and event stream, 2 and 8 players at the last round), throughput
with 1,000 versus 100,000 stored games (a second Redis and a second service,
holding copies of the same 1,000 games plus 99,000 fresh 2-player games
RESTOREd next to them; the player view and moves run on both, back to back, in
every repetition), and the in-process cost of
``observe(state, seat)`` for 14-card hands.

    .venv/bin/python bench/http_bench.py [--repeats 7] [--duration 3] [--quick]

Writes bench/results/http.json; ``bench/report.py`` turns it into a chart and
a markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bench._games import (  # noqa: E402
    add_filler,
    copy_games,
    create_hot_games,
    game_at_last_round,
    game_bytes,
    refresh,
    view_cost,
)
from bench._load import run_measured  # noqa: E402
from bench._redis_stats import delta, redis_counters, round_trips  # noqa: E402
from bench._summary import (  # noqa: E402
    hand_sizes,
    passed,
    print_table,
    scale_results,
    scenario_results,
    server_cost,
    with_view_cost_verdict,
    write_json,
)
from harness.gunicorn_server import SERVICE_APP, GunicornServer  # noqa: E402
from harness.redis_server import RedisServer  # noqa: E402
from service.hosting.snapshots import events_payload, snapshot  # noqa: E402
from service.store import GameStore, key  # noqa: E402
from service.store.keys import EVENTS, STATE  # noqa: E402

RESULTS = ROOT / "bench" / "results"

SCENARIOS = ("ceiling", "public_view", "player_view", "not_modified", "moves")
PLAYED = ("moves", "not_modified")
"""Scenarios whose load needs the games' versions, turns and phases read back first."""
SCALE_SCENARIOS = ("player_view", "moves")  # also run against the service with --stored games

WRK_INSTALL_HINT = (
    "wrk not found: install it with `sudo apt-get install -y wrk` (Debian/Ubuntu) for the "
    "reference figures; falling back to the Python load generator (lower absolute numbers, "
    "ratios still like with like)."
)


@dataclass
class Target:
    """A server under load: its gunicorn, the Redis behind it and the games the
    load cycles over (as stored in that Redis)."""

    name: str
    server: GunicornServer
    redis: RedisServer
    client: redis.Redis
    games: list[dict[str, Any]]

    @property
    def port(self) -> int:
        return self.server.port


def serve(
    name: str,
    app: str,
    store: RedisServer,
    workers: int,
    work: Path,
    extra_env: dict[str, str] | None = None,
    tree: Path = ROOT,
) -> GunicornServer:
    """``app`` under gunicorn with the service's settings and ``workers`` workers, on
    ``store``; rate limits off, the access log formatted and sent to /dev/null;
    ``extra_env`` on top and ``tree`` the checkout served (a variant of
    ``bench/side_by_side.py``)."""
    env = {"REDIS_URL": store.url, "WEB_CONCURRENCY": str(workers)}  # the ceiling too
    env.update(extra_env or {})
    server = GunicornServer(
        env, app=app, ready_path="/healthz", access_log=False, log_dir=work, name=name, tree=tree
    )
    return server.start()


def start_redis() -> RedisServer:
    """A throwaway redis-server (no persistence), stopped by PID at the end."""
    if shutil.which("redis-server") is None:
        sys.exit("redis-server not found on PATH (Debian: apt-get install -y redis-server)")
    return RedisServer().start()


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--games", type=int, default=1000, help="games the load cycles over")
    parser.add_argument("--stored", type=int, default=100_000, help="stored games, scale test")
    parser.add_argument(
        "--templates", type=int, default=50, help="distinct played games (each copy redealt)"
    )
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--generator", choices=("auto", "wrk", "python"), default="auto")
    parser.add_argument("--quick", action="store_true", help="1 repeat of 2 s, 10,000 stored")
    parser.add_argument("--out", type=Path, default=RESULTS / "http.json")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.duration, args.stored = 1, 2.0, 10_000

    args.wrk = shutil.which("wrk")
    generator = args.generator
    if generator == "auto":
        generator = "wrk" if args.wrk else "python"
        if not args.wrk:
            print(WRK_INSTALL_HINT, file=sys.stderr)
    elif generator == "wrk" and not args.wrk:
        sys.exit(WRK_INSTALL_HINT.split(";")[0])

    work = RESULTS / "work"
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    procs: list[GunicornServer | RedisServer] = []

    def log(msg: str) -> None:
        print(f"[{time.monotonic() - started:6.1f}s] {msg}", flush=True)

    def measure(mode: str, target: Target, seconds: float) -> Any:
        return run_measured(mode, target, args, work, seconds, wrk=generator == "wrk")

    try:
        redis_proc = start_redis()
        procs.append(redis_proc)
        client = redis.Redis.from_url(redis_proc.url)
        store = GameStore(client)
        log(f"redis-server on port {redis_proc.port} (pid {redis_proc.pid})")

        # -- in-process view cost
        cost = with_view_cost_verdict(view_cost(300, 15))
        log(
            f"observe(state, seat) with {hand_sizes(cost)}-card hands: median "
            f"{cost['observe']['median_ms']:.3f} ms, p99 {cost['observe']['p99_ms']:.3f} ms"
        )

        # -- bytes per game at the last round
        sizes = {}
        for players in (2, 8):
            record, _tokens, events = game_at_last_round(players)
            store.create(
                record.id, record.to_bytes(), events_payload(events), **snapshot(record, 1)
            )
            sizes[str(players)] = game_bytes(client, record.id)
            client.delete(key(record.id, STATE), key(record.id, EVENTS))
        log(
            f"bytes per game at the last round: { {k: v['total_bytes'] for k, v in sizes.items()} }"
        )

        # -- the games the load cycles over
        games = create_hot_games(store, args.games, args.templates)
        refresh(client, games)
        log(f"{len(games)} 2-player games at the last round stored")

        # -- a second Redis: the same games plus fresh ones up to --stored (scale check)
        large_proc = start_redis()
        procs.append(large_proc)
        large_client = redis.Redis.from_url(large_proc.url)
        copy_games(client, large_client, games, store.game_ttl_seconds)
        made = add_filler(large_client, GameStore(large_client), args.stored, args.games)
        large_games = [dict(g) for g in games]
        refresh(large_client, large_games)
        keys_small, keys_large = int(client.dbsize()), int(large_client.dbsize())
        used_memory = int(large_client.info("memory")["used_memory"])
        log(
            f"second redis-server on port {large_proc.port}: the same {len(games)} games and "
            f"{made} fresh ones, {keys_large} keys, {used_memory / 2**20:.0f} MiB used"
        )

        # -- servers
        w = args.workers
        service = serve("service", SERVICE_APP, redis_proc, w, work)
        procs.append(service)
        service_large = serve("service-large", SERVICE_APP, large_proc, w, work)
        procs.append(service_large)
        ceiling_server = serve("ceiling", "bench.flask_ceiling:app", redis_proc, w, work)
        procs.append(ceiling_server)
        small = Target("small", service, redis_proc, client, games)
        large = Target("large", service_large, large_proc, large_client, large_games)
        ceiling = Target("ceiling", ceiling_server, redis_proc, client, games)
        log(
            f"gunicorn x3 ({args.workers} gevent workers): service "
            f":{small.port} ({len(games)} games stored), the same on :{large.port} "
            f"({len(games) + made} games stored), ceiling :{ceiling.port}; generator "
            f"{generator}, {args.connections} connections"
        )

        warm = min(2.0, args.duration)
        measure("ceiling", ceiling, warm)
        for mode in SCENARIOS[1:]:
            for target in [small] + [large] * (mode in SCALE_SCENARIOS):
                if mode in PLAYED:
                    refresh(target.client, target.games)
                measure(mode, target, warm)
        log("warmed up")

        modes = SCENARIOS[1:]
        runs: dict[str, list[dict[str, Any]]] = {m: [] for m in SCENARIOS}
        large_runs: dict[str, list[dict[str, Any]]] = {m: [] for m in SCALE_SCENARIOS}
        ratios: dict[str, list[float]] = {m: [] for m in modes}
        scale_diffs: dict[str, list[float]] = {m: [] for m in SCALE_SCENARIOS}
        scale_cpu_diffs: dict[str, list[float]] = {m: [] for m in SCALE_SCENARIOS}
        previous_ratios: dict[str, list[float]] = {m: [] for m in modes}
        cpu_ratios: dict[str, list[float]] = {m: [] for m in modes}
        move_counts: dict[str, int] = {}
        moves_done = 0

        def run(rep: int, mode: str, target: Target) -> dict[str, Any]:
            nonlocal moves_done
            if mode in PLAYED:
                refresh(target.client, target.games)
            counted = mode == "moves" and target is small  # round trips: one Redis counts
            before = redis_counters(target.client) if counted else None
            versions = sum(g["v"] for g in target.games)
            result = measure(mode, target, args.duration)
            if before is not None:
                time.sleep(0.5)  # let the requests in flight when wrk stopped land
                # read the counters before refresh(), whose own HMGETs are
                # the benchmark's, not the moves'
                after = redis_counters(target.client)
                refresh(target.client, target.games)  # moves made = versions gained
                for k, v in delta(after, before).items():
                    move_counts[k] = move_counts.get(k, 0) + v
                moves_done += sum(g["v"] for g in target.games) - versions
            (runs if target is not large else large_runs)[mode].append(result)
            where = "" if target is ceiling else f" ({target.name})"
            log(
                f"rep {rep + 1}/{args.repeats} {mode + where:21s} "
                f"{result['rps']:8.0f} req/s  p50 {result['p50_ms']:6.2f} ms  "
                f"p99 {result['p99_ms']:6.2f} ms  bad {result['bad']}  cpu/req: "
                f"gunicorn {result.get('server_cpu_ms', 0):.2f} ms, "
                f"redis {result.get('redis_cpu_ms', 0):.3f} ms"
            )
            return result

        # ceiling, scenario, ceiling, scenario, ... ceiling: each scenario run sits
        # between two ceiling runs and is compared with their mean, which cancels a
        # drift of the machine over the three runs and averages two ceiling runs.
        # The scale scenarios run twice on each service, interleaved (ABBA), and
        # the two services are compared with each other.
        before = run(0, "ceiling", ceiling)
        for rep in range(args.repeats):
            for mode in modes:
                # the scale scenarios: small, large, large, small (or the mirror on
                # odd repeats) so that a drift over the four runs cancels out
                order = [small]
                if mode in SCALE_SCENARIOS:
                    order = [small, large, large, small]
                    if rep % 2:
                        order = [large, small, small, large]
                done: dict[str, list[dict[str, Any]]] = {}
                for target in order:
                    done.setdefault(target.name, []).append(run(rep, mode, target))
                after = run(rep, "ceiling", ceiling)
                ceiling_rps = (before["rps"] + after["rps"]) / 2
                served_rps = statistics.mean(r["rps"] for r in done[small.name])
                ratios[mode].append(served_rps / ceiling_rps)
                previous_ratios[mode].append(done[small.name][0]["rps"] / before["rps"])
                run_cost = statistics.mean(server_cost(r) for r in done[small.name])
                if run_cost:
                    ceiling_cost = (server_cost(before) + server_cost(after)) / 2
                    cpu_ratios[mode].append(ceiling_cost / run_cost)
                if "large" in done:
                    large_rps = statistics.mean(r["rps"] for r in done["large"])
                    scale_diffs[mode].append(large_rps / served_rps - 1)
                    large_cost = statistics.mean(server_cost(r) for r in done["large"])
                    if run_cost and large_cost:
                        scale_cpu_diffs[mode].append(large_cost / run_cost - 1)
                before = after
        main_results = scenario_results(runs, ratios, previous_ratios, cpu_ratios)
        trips = round_trips(move_counts, moves_done)
        scale = scale_results(main_results, large_runs, scale_diffs, scale_cpu_diffs)
        scale_info = {
            "games_small": args.games,
            "games_large": args.games + made,
            "keys_small": keys_small,
            "keys_large": keys_large,
            "used_memory_large": used_memory,
            "large_runs": large_runs,
            "by_scenario": scale,
        }
    finally:
        for proc in reversed(procs):
            proc.cleanup()

    result = {
        "meta": {
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "machine": platform.node(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "generator": generator,
            "workers": args.workers,
            "worker": "gevent",
            "connections": args.connections,
            "repeats": args.repeats,
            "duration_s": args.duration,
            "games": args.games,
            "game_kind": "2 players, last round (13-card hands, 14 after a draw)",
            "elapsed_s": round(time.monotonic() - started, 1),
        },
        "scenarios": main_results,
        "round_trips": trips,
        "bytes_per_game": sizes,
        "scale": scale_info,
        "view_cost": cost,
    }
    write_json(result, args.out)
    print_table(result)
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0 if passed(main_results, trips, scale, cost) else 1


if __name__ == "__main__":
    sys.exit(main())
