"""Real-time benchmark (issue 27): N waiting clients on one instance while games are played.

For each N of ``--waiters`` (and each of ``--repeats``) one run:

1. starts the service under gunicorn with the shipped settings
   (``deploy/gunicorn.conf.py``, the default WEB_CONCURRENCY and
   GUNICORN_WORKER_CONNECTIONS unless set in the environment or
   ``--worker-connections``) on a throwaway ``redis-server``, loopback only;
2. creates max(N / ``--waiters-per-game``, ``--min-games``) games over HTTP and
   plays ``--moves-per-second`` across them for ``--warmup`` s (no waiter yet);
   reads the workers' RSS and the instance's Redis connections;
3. opens N waiting clients in ``--per-process``-sized child processes
   (``bench/_rt_waiters.py``): about ``--sse-share`` of them SSE streams, the
   rest long polls, about ``--seat-share`` of them with a seat's token, the
   others spectators; waiter i follows game i mod games.  Once all got their
   first answer: RSS and Redis connections again;
4. plays moves for ``--duration`` s while they wait (``bench/_rt_movers.py``),
   with a ``/readyz`` probe, and samples RSS and Redis connections midway;
5. reads every waited game's full event list (long poll, ``wait=0``, paged)
   as each waiter sees it, lets the waiters catch up (``--drain`` s at most),
   and checks every waiter's events (all, in order, exactly once) and the
   delivery latency of each move to each waiter (``bench/_rt_check.py``).

Prints a table of the medians over repeats (``bench/_rt_table.py``) and
writes every run to ``bench/results/realtime.json``.  Times: the movers (this
process) and the waiters (child processes) read ``time.monotonic()``, i.e.
CLOCK_MONOTONIC, one clock for all processes of the machine.

    .venv/bin/python bench/realtime.py --waiters 100,1000,10000 --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import os
import random
import resource
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._rt_check import (  # noqa: E402
    LAG,
    latencies,
    move_times,
    reference,
    stored_references,
    verify,
)  # noqa: E402
from bench._rt_movers import Game, Movers  # noqa: E402
from bench._rt_server import bench_client, redis_clients, workers_rss_kb  # noqa: E402
from bench._rt_table import print_table, summarize, write_json  # noqa: E402
from bench._rt_waiters import raise_fd_limit, waiter_process  # noqa: E402
from harness.gunicorn_server import GunicornServer  # noqa: E402
from harness.proc_stats import cpu_seconds  # noqa: E402
from harness.redis_server import RedisServer  # noqa: E402
from service.config import Config  # noqa: E402

HOST = "127.0.0.1"
RESULTS = ROOT / "bench" / "results"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--waiters", default="100,1000,10000", help="comma-separated N")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--moves-per-second", type=float, default=200.0)
    p.add_argument("--duration", type=float, default=30.0, help="seconds of moves while N wait")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds of moves before waiting")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--waiters-per-game", type=int, default=4)
    p.add_argument("--min-games", type=int, default=250)
    p.add_argument("--sse-share", type=float, default=0.5)
    p.add_argument("--seat-share", type=float, default=0.5)
    p.add_argument("--per-process", type=int, default=5000, help="waiters per generator process")
    p.add_argument("--drain", type=float, default=15.0, help="max seconds to let waiters catch up")
    p.add_argument(
        "--reference",
        choices=("http", "redis"),
        default="http",
        help="read each game's full event list over the long poll (wait=0) or from Redis",
    )
    p.add_argument("--connect-rate", type=float, default=500.0, help="new waiters per second")
    p.add_argument("--worker-connections", type=int, help="GUNICORN_WORKER_CONNECTIONS to set")
    p.add_argument("--out", type=Path, default=RESULTS / "realtime.json")
    return p.parse_args(argv)


def server_env(redis_url: str, args: argparse.Namespace) -> tuple[dict[str, str], Config]:
    """The instance's environment: shipped defaults unless the caller's environment or an
    option says otherwise (the harness pins WEB_CONCURRENCY=1 unless it is given)."""
    config = Config.from_env({"REDIS_URL": redis_url, **_inherited()})
    env = {"REDIS_URL": redis_url, "WEB_CONCURRENCY": str(config.web_concurrency)}
    if args.worker_connections:
        env["GUNICORN_WORKER_CONNECTIONS"] = str(args.worker_connections)
    return env, Config.from_env({**_inherited(), **env})


def _inherited() -> dict[str, str]:
    names = ("WEB_CONCURRENCY", "GUNICORN_WORKER_CONNECTIONS", "LONG_POLL_MAX_SECONDS")
    return {name: os.environ[name] for name in names if name in os.environ}


def waiter_specs(n: int, games: list[Game], args: argparse.Namespace) -> list[dict[str, Any]]:
    rng = random.Random(n)
    specs = []
    for i in range(n):
        game = games[i % len(games)]
        seat = (i // len(games)) % len(game.tokens)
        token = game.tokens[seat] if rng.random() < args.seat_share else None
        mode = "sse" if rng.random() < args.sse_share else "poll"
        specs.append({"index": i, "game": game.id, "token": token, "mode": mode, "seat": seat})
    return specs


async def _recv(pipe: Any, timeout: float) -> Any:
    if not await asyncio.to_thread(pipe.poll, timeout):
        raise TimeoutError(f"no answer from a waiter process within {timeout:.0f} s")
    return pipe.recv()


async def drive(
    server: GunicornServer, redis: RedisServer, n: int, args: argparse.Namespace, out: Any
) -> None:
    """One run at ``n`` waiters; its figures go into ``out`` as they come."""
    procs: list[Any] = []
    try:
        await _drive(server, redis, n, args, out, procs)
    finally:
        for proc, _pipe in procs:  # only left alive if the run broke
            if proc.is_alive():
                proc.terminate()
            proc.join(10)


async def _drive(
    server: GunicornServer,
    redis: RedisServer,
    n: int,
    args: argparse.Namespace,
    out: dict[str, Any],
    procs: list[Any],
) -> None:
    rclient = bench_client(redis.url)

    def pids() -> list[int]:
        return [server.pid or 0, *server.workers()]

    movers = Movers(HOST, server.port, args.moves_per_second)
    count = max(math.ceil(n / args.waiters_per_game), args.min_games)
    t0 = time.monotonic()
    games = await movers.create_games(count, args.players)
    out["games"], out["create_s"] = len(games), time.monotonic() - t0
    await movers.play(games, args.warmup)
    out["warmup_errors"] = dict(movers.errors)
    await asyncio.sleep(1)
    workers0 = server.workers()
    out["rss_idle_kb"] = workers_rss_kb(workers0)
    out["redis_idle"] = redis_clients(rclient, redis.port, pids())

    specs = waiter_specs(n, games, args)
    chunks = [specs[i : i + args.per_process] for i in range(0, n, args.per_process)]
    ctx = multiprocessing.get_context("spawn")
    wait = 30 + n / args.connect_rate  # for all to get their first answer
    t0 = time.monotonic()
    for chunk in chunks:
        parent, child = ctx.Pipe()
        rate = args.connect_rate / len(chunks)
        proc = ctx.Process(
            target=waiter_process, args=(chunk, HOST, server.port, child, wait, rate)
        )
        proc.start()
        procs.append((proc, parent))
    ready = await asyncio.gather(*(_recv(pipe, wait + 30) for _p, pipe in procs))
    out["connect_s"] = time.monotonic() - t0
    out["connected"] = sum(r[1] for r in ready)
    out["connect_failed"] = sum(r[2] for r in ready)
    out["_ready_counters"] = sum((Counter(r[3]) for r in ready), Counter())
    out["connect_errors"] = dict(out["_ready_counters"])
    await asyncio.sleep(2)
    out["rss_waiting_kb"] = workers_rss_kb(server.workers())
    out["redis_waiting"] = redis_clients(rclient, redis.port, pids())

    cpu0 = _cpu(server, redis, procs)
    since = time.monotonic()
    movers.measuring, movers.errors = True, Counter()
    stop = asyncio.Event()
    probe = asyncio.create_task(movers.probe(stop))

    async def midway() -> None:
        await asyncio.sleep(args.duration / 2)
        out["rss_moving_kb"] = workers_rss_kb(server.workers())
        out["redis_moving"] = redis_clients(rclient, redis.port, pids())

    started = movers.started
    await asyncio.gather(movers.play(games, args.duration), midway())
    elapsed = time.monotonic() - since
    out["moves_ended_at"] = since + elapsed
    stop.set()
    await probe
    cpu1 = _cpu(server, redis, procs)
    out["cpu_percent"] = {k: 100 * (cpu1[k] - cpu0[k]) / elapsed for k in cpu0}
    window = (since, since + args.duration)  # moves answered 200 while the ticks ran
    answered = sum(window[0] <= t < window[1] for g in games for t, _kind in g.moves)
    out["moves_per_s"] = answered / args.duration
    out["moves_started_per_s"] = (movers.started - started) / args.duration
    out["skipped_ticks"] = movers.skipped
    out["mover_errors"] = dict(movers.errors)
    out["samples"] = {k: list(v) for k, v in movers.samples.items()}
    out["workers_recycled"] = len(set(workers0) - set(server.workers()))

    t0 = time.monotonic()
    refs = await _references(movers, rclient, specs, args.reference)
    out["reference_s"] = time.monotonic() - t0
    targets = {s["index"]: (refs[(s["game"], s["token"])] or [(0, 0, "")])[-1][0] for s in specs}
    results: list[dict[str, Any]] = []
    counters: Counter[str] = Counter()
    for (_proc, pipe), chunk in zip(procs, chunks, strict=True):
        pipe.send(("finish", {s["index"]: targets[s["index"]] for s in chunk}, args.drain))
    for proc, pipe in procs:
        _kind, got, errs = await _recv(pipe, args.drain + 120)
        results += got
        counters.update(errs)
        proc.join(30)
    out["waiter_errors"] = dict(counters)
    out["waiter_errors_waiting"] = dict(counters - out.pop("_ready_counters"))
    _check(out, results, specs, refs, {g.id: g for g in games}, since)


def _cpu(server: GunicornServer, redis: RedisServer, procs: list[Any]) -> dict[str, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    gens = {f"waiters{i}": cpu_seconds(proc.pid) for i, (proc, _pipe) in enumerate(procs)}
    return {
        "gunicorn": server.cpu_seconds(),
        "redis": redis.cpu_seconds(),
        "movers": usage.ru_utime + usage.ru_stime,
        **gens,
    }


async def _references(
    movers: Movers, rclient: Any, specs: list[dict[str, Any]], how: str
) -> dict[tuple[str, str | None], list[tuple[int, int, str]]]:
    """Every waiter's expected events, by (game, token): as the long poll (wait=0,
    paged) answers them, or (``--reference redis``) from the games' streams in Redis."""
    wanted = {(s["game"], s["token"]) for s in specs} | {(s["game"], None) for s in specs}
    seat_of = {s["token"]: s["seat"] for s in specs if s["token"]}
    if how == "redis":
        stored = stored_references(rclient, {(g, seat_of.get(t)) for g, t in wanted})
        return {(g, t): stored[(g, seat_of.get(t))] for g, t in wanted}
    refs: dict[tuple[str, str | None], list[tuple[int, int, str]]] = {}
    gate = asyncio.Semaphore(32)

    async def one(key: tuple[str, str | None]) -> None:
        async with gate:
            refs[key] = await reference(movers, *key)

    await asyncio.gather(*(one(key) for key in wanted))
    return refs


def _check(
    out: dict[str, Any],
    results: list[dict[str, Any]],
    specs: list[dict[str, Any]],
    refs: dict[tuple[str, str | None], list[tuple[int, int, str]]],
    games: dict[str, Game],
    since: float,
) -> None:
    violations: Counter[str] = Counter()
    bad_waiters = 0
    delivery: dict[str, list[float]] = {"poll": [], "sse": []}
    early = unmapped = 0
    behind: list[dict[str, Any]] = []
    timing: dict[str, tuple[list[int], list[float]]] = {}
    for game_id, game in games.items():
        if (game_id, None) in refs:
            timing[game_id] = move_times(game, refs[(game_id, None)])
            unmapped += not timing[game_id][0] and bool(game.moves)
    for got in results:
        spec = specs[got["index"]]
        found = verify(got, refs[(spec["game"], spec["token"])])
        violations.update(found)
        bad_waiters += bool(found)
        if found.get(LAG):
            behind.append(_behind(got, spec, refs[(spec["game"], spec["token"])], found[LAG]))
        starts, answered = timing[spec["game"]]
        if starts:
            lat, before = latencies(got, starts, answered, since)
            delivery[spec["mode"]] += lat
            early += before
    out["behind_at_end"] = violations.pop(LAG, 0)
    out["behind_waiters"] = behind
    out["violations"] = dict(violations)
    out["waiters_with_violations"] = bad_waiters
    out["delivery_ms"] = delivery
    out["delivered_before_200"] = early
    out["games_unmapped"] = unmapped
    out["reconnects"] = sum(r["reconnects"] for r in results)
    out["reopened"] = sum(max(0, r["opened"] - 1) for r in results)
    out["heartbeats"] = sum(r["heartbeats"] for r in results)
    out["modes"] = dict(Counter(s["mode"] + ("+seat" if s["token"] else "") for s in specs))


def _behind(
    got: dict[str, Any], spec: dict[str, Any], expected: list[tuple[int, int, str]], missing: int
) -> dict[str, Any]:
    """What a waiter that ended behind had: to tell a lost wake-up from a slow client."""
    return {
        "mode": spec["mode"] + ("+seat" if spec["token"] else ""),
        "game": spec["game"],
        "missing": missing,
        "last_received": got["seqs"][-1] if got["seqs"] else 0,
        "last_expected": expected[-1][0] if expected else 0,
        "expected_types": [kind for _seq, _crc, kind in expected[-missing:]],
        "last_receipt": got["times"][-1] if got["times"] else None,
        "reconnects": got["reconnects"],
    }


def run_one(
    redis: RedisServer, n: int, args: argparse.Namespace, work: Path, repeat: int
) -> dict[str, Any]:
    env, config = server_env(redis.url, args)
    capacity = config.web_concurrency * config.gunicorn_worker_connections
    note = ""
    if n + 80 > capacity:
        note = (
            f"N={n} needs more than {config.web_concurrency} workers x "
            f"{config.gunicorn_worker_connections} connections = {capacity} "
            f"(set GUNICORN_WORKER_CONNECTIONS >= {math.ceil((n + 80) / config.web_concurrency)})"
        )
        print(f"  NOTE: {note}; not overriding", flush=True)
    log_dir = work / f"n{n}-r{repeat + 1}"
    shutil.rmtree(log_dir, ignore_errors=True)
    log_dir.mkdir(parents=True)
    with GunicornServer(env, access_log=False, log_dir=log_dir) as server:
        out: dict[str, Any] = {"waiters": n}
        try:
            asyncio.run(drive(server, redis, n, args, out))
        except Exception as exc:  # a broken run is a finding of the sweep, not its end
            out["broken"] = f"{type(exc).__name__}: {exc}"[:500]
            print(f"  BROKE: {out['broken']}", flush=True)
            print(f"  so far: {_partial(out)}", flush=True)
        out["server_log_tail"] = server.stderr()[-2000:]
    out["workers"], out["worker_connections"] = config.web_concurrency, capacity
    out["capacity_note"] = note
    return out


def _partial(out: dict[str, Any]) -> str:
    shown = ("games", "connected", "connect_failed", "connect_errors", "mover_errors")
    return ", ".join(f"{k}={out[k]}" for k in shown if k in out)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = [int(x) for x in args.waiters.split(",") if x.strip()]
    raise_fd_limit(4096)
    runs: list[dict[str, Any]] = []
    work = args.out.parent / "work" / "realtime"
    with RedisServer() as redis:
        for n in sizes:
            for r in range(args.repeats):
                print(f"N={n} repeat {r + 1}/{args.repeats} ...", flush=True)
                run = run_one(redis, n, args, work, r)
                run["repeat"] = r
                runs.append(run)
                if "broken" not in run:
                    print("  " + summarize([run])[0]["line"], flush=True)
    rows = summarize(runs)
    write_json(args.out, args, runs, rows)
    print_table(rows, args)
    delivered = all(not r.get("violations", 1) and not r.get("behind_at_end") for r in runs)
    return 0 if delivered else 1


if __name__ == "__main__":
    sys.exit(main())
