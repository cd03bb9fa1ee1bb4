"""Leaderboard reads with 1,000,000 rated players: a page and a player's place, p50/p99,
through the hosting functions and over HTTP, and the memory the board takes.

A throwaway redis-server is filled with one board (an app's, classic rules, 2 seats;
``LEADERBOARD_SHARDS`` 16) of ``--players`` players, pipelined: ratings about
``N(15, 8)`` rounded to a hundredth (so many ties), 5 to 300 games.  Then, each
``--reads`` times, from one thread:

* ``first page``: the board's first page of 20 (``top``, no cursor);
* ``deep page``: a page of 20 after a random player's entry (a cursor in the middle
  of the board);
* ``around-me``: a random player's place with 5 entries above and below (``around``:
  its own entry, then every shard);

through :mod:`service.hosting.leaderboards` on the store, then over HTTP from one
gunicorn instance (one worker, ``AUTH_MODE=apps``: the app's key for pages, players'
tokens for around-me; keep-alive connection, one request at a time).  Printed: p50
and p99 of each (ms), and ``INFO memory``'s ``used_memory`` before and after the
fill, per player.

    .venv/bin/python bench/leaderboard.py [--players 1000000] [--reads 2000] [--no-http]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.gunicorn_server import GunicornServer  # noqa: E402
from harness.redis_server import RedisServer  # noqa: E402
from service.config import Config  # noqa: E402
from service.hosting import apps, leaderboards, players  # noqa: E402
from service.hosting.leaderboards import Board  # noqa: E402
from service.store import GameStore, connect  # noqa: E402
from service.store.leaderboards import POST_SCRIPT, shard_of  # noqa: E402

BATCH = 10_000


def fill(store: GameStore, board: Board, count: int, seed: int) -> dict[str, float]:
    """``count`` players on ``board`` (pipelined posts); their ratings."""
    rnd = random.Random(seed)
    client = store.client
    sha = client.script_load(POST_SCRIPT)
    shards = store.leaderboards.shard_keys(board.name)
    now_ms = int(time.time() * 1000)
    ratings: dict[str, float] = {}
    pipe = client.pipeline(transaction=False)
    for n in range(count):
        player = f"user{n}"
        rating = round(rnd.gauss(15, 8), 2)
        ratings[player] = rating
        ratings_key, entries_key = shards[shard_of(player, len(shards))]
        games = rnd.randint(5, 300)
        pipe.execute_command(
            "EVALSHA", sha, 2, ratings_key, entries_key, player, repr(-rating + 0.0), games, now_ms
        )
        if len(pipe) >= BATCH:
            pipe.execute()
    pipe.execute()
    return ratings


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``samples`` (seconds), in ms."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49] * 1000, cuts[98] * 1000


def timed(reads: int, call: Callable[[int], Any]) -> list[float]:
    samples = []
    for i in range(reads):
        start = time.perf_counter()
        call(i)
        samples.append(time.perf_counter() - start)
    return samples


def redis_time(client: Any, reads: int, call: Callable[[int], Any]) -> float:
    """Redis's own time per read (µs: every command's, from ``INFO commandstats``)."""
    client.config_resetstat()
    for i in range(reads):
        call(i)
    stats = client.info("commandstats")
    busy = sum(v["usec"] for k, v in stats.items() if not k.endswith(("config|resetstat", "info")))
    return float(busy) / reads


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=1_000_000)
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--no-http", action="store_true", help="only the hosting functions")
    args = parser.parse_args()
    started = time.monotonic()

    def log(msg: str) -> None:
        print(f"[{time.monotonic() - started:6.1f}s] {msg}", flush=True)

    server = RedisServer().start()
    gunicorn: GunicornServer | None = None
    results: dict[str, dict[str, tuple[float, float]]] = {}
    redis_us: dict[str, float] = {}
    try:
        config = Config.from_env({"REDIS_URL": server.url})
        store = GameStore(connect(config), config=config)
        app, key = apps.create_app_record(store.apps, "bench")
        board = Board(app.id, "classic", 2)
        before = int(store.client.info("memory")["used_memory"])
        ratings = fill(store, board, args.players, seed=1)
        after = int(store.client.info("memory")["used_memory"])
        log(f"filled {args.players:,} players")
        assert leaderboards.top(store, board, 1).total == args.players
        ids = list(ratings)
        rnd = random.Random(2)
        picks = [rnd.choice(ids) for _ in range(args.reads)]
        since = int(time.time() * 1000)
        cursors = [leaderboards.cursor_of(since, ratings[p], p) for p in picks]

        def first_page(_i: int) -> None:
            assert len(leaderboards.top(store, board, 20).entries) == 20

        def deep_page(i: int) -> None:
            leaderboards.top(store, board, 20, cursors[i])

        def around_me(i: int) -> None:
            assert leaderboards.around(store, board, picks[i], 5).rank is not None

        for name, call in (
            ("first page", first_page),
            ("deep page", deep_page),
            ("around-me", around_me),
        ):
            timed(min(200, args.reads), call)  # warm up
            results.setdefault(name, {})["hosting"] = percentiles(timed(args.reads, call))
            redis_us[name] = redis_time(store.client, min(500, args.reads), call)
            log(f"hosting {name}: p50 {results[name]['hosting'][0]:.2f} ms")

        if not args.no_http:
            gunicorn = GunicornServer(
                {"REDIS_URL": server.url, "AUTH_MODE": "apps"}, access_log=False, bots=False
            ).start()
            tokens = {}
            for player in sorted(set(picks))[: min(200, len(set(picks)))]:
                tokens[player], _ = players.mint(store.apps, app.id, player, "p", 86400)
            token_list = list(tokens.items())
            conn = http.client.HTTPConnection(gunicorn.host, gunicorn.port, timeout=30)
            app_auth = {"Authorization": f"Bearer {key}"}
            base = "/v1/leaderboards/classic/2"

            def get(path: str, headers: dict[str, str]) -> dict[str, Any]:
                conn.request("GET", path, headers=headers)
                answer = conn.getresponse()
                body = answer.read()
                assert answer.status == 200, (answer.status, body[:300])
                found: dict[str, Any] = json.loads(body)
                return found

            def http_first(_i: int) -> None:
                assert len(get(f"{base}?limit=20", app_auth)["entries"]) == 20

            def http_deep(i: int) -> None:
                get(f"{base}?limit=20&cursor={cursors[i]}", app_auth)

            def http_around(i: int) -> None:
                player, token = token_list[i % len(token_list)]
                found = get(f"{base}/around-me?count=5", {"Authorization": f"Bearer {token}"})
                assert found["rank"] is not None and found["player_id"] == player

            for name, call in (
                ("first page", http_first),
                ("deep page", http_deep),
                ("around-me", http_around),
            ):
                timed(min(200, args.reads), call)
                results[name]["http"] = percentiles(timed(args.reads, call))
                log(f"http {name}: p50 {results[name]['http'][0]:.2f} ms")
            conn.close()
    finally:
        if gunicorn is not None:
            gunicorn.cleanup()
        server.cleanup()

    print(f"\nplayers {args.players:,}, reads {args.reads} each, 16 shards, one thread")
    print(
        f"{'read':12s} {'hosting p50':>12s} {'p99':>8s} {'HTTP p50':>10s} {'p99':>8s}  (ms)"
        f"  {'Redis time/read':>16s}"
    )
    for name, found in results.items():
        h50, h99 = found["hosting"]
        w50, w99 = found.get("http", (float("nan"), float("nan")))
        print(
            f"{name:12s} {h50:12.2f} {h99:8.2f} {w50:10.2f} {w99:8.2f}"
            f"       {redis_us[name]:8.0f} µs"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    used = after - before
    print(
        f"used_memory: {before / 2**20:.1f} MiB before, {after / 2**20:.1f} MiB after: "
        f"{used / 2**20:.1f} MiB, {used / args.players:.0f} bytes per player"
    )
    return 0  # a benchmark reports; the tests assert


if __name__ == "__main__":
    sys.exit(main())
