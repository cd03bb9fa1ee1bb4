"""CPU per Redis round trip: redis-py's client against the store's Link, side by side.

    .venv/bin/python bench/redis_link_bench.py [--calls 20000] [--repeats 7]

Starts its own redis-server (from PATH, on a free port; stopped at the end) and
times, in alternation, the same ``HMGET`` sent through ``redis.Redis.hmget``
and through :class:`service.store.link.Link` (what the store uses for views
and moves), and the same for the two-command pipeline of a keyed move.  It
prints the median process CPU time per call of each and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis  # noqa: E402

from harness.redis_server import RedisServer  # noqa: E402
from service.store.link import Link  # noqa: E402


def cpu_per_call(func: Callable[[], object], calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        func()
    return (time.process_time() - start) / calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    server = RedisServer()
    server.start()
    try:
        client = redis.Redis.from_url(server.url)
        link = Link(client)
        state, idem = "t13:{g}:state", "t13:{g}:idem"
        client.hset(state, mapping={"v": 7, "d": b"x" * 2000})

        def pipelined() -> object:
            pipe = client.pipeline(transaction=False)
            pipe.hmget(state, "v", "d")
            pipe.hmget(idem, "k:f", "k:r")
            return pipe.execute()

        pairs = {
            "HMGET": (
                lambda: client.hmget(state, "v", "d"),
                lambda: link.execute(("HMGET", state, "v", "d")),
            ),
            "2 x HMGET, one round trip": (
                pipelined,
                lambda: link.execute(("HMGET", state, "v", "d"), ("HMGET", idem, "k:f", "k:r")),
            ),
        }
        print(f"median of {args.repeats} x {args.calls} calls, process CPU per call")
        print("| command | redis-py client, µs | Link, µs | Link / client |")
        print("|---|---:|---:|---:|")
        for name, (plain, lean) in pairs.items():
            cpu_per_call(plain, 1000), cpu_per_call(lean, 1000)  # warm up
            a, b = [], []
            for _ in range(args.repeats):
                a.append(cpu_per_call(plain, args.calls))
                b.append(cpu_per_call(lean, args.calls))
            ma, mb = statistics.median(a) * 1e6, statistics.median(b) * 1e6
            print(f"| {name} | {ma:.1f} | {mb:.1f} | {mb / ma:.2f} |")
        client.close()
    finally:
        server.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
