"""What ``REDIS_WAIT_REPLICAS`` costs a commit: one client, a primary and one replica
on loopback, commits of a 3 KB document with two events, with and without the wait,
interleaved (A B, then B A...), one at a time.

    .venv/bin/python bench/confirmed_writes.py [--commits 3000]

Prints the median, p90 and p99 of a commit's round trip (``GameStore.commit``) for
each.  The HTTP view of the same (req/s, p99 of moves under load) is ``make bench-ab
AB="--replicas 1 --a REDIS_WAIT_REPLICAS=0 --b REDIS_WAIT_REPLICAS=1 --scenarios
moves"``.  Everything started is stopped by PID.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.redis_replication import replicated  # noqa: E402
from service.config import Config  # noqa: E402
from service.store import GameStore  # noqa: E402

DOC = b"x" * 3000
EVENTS = [b"e" * 80] * 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=3000, help="commits of each variant")
    args = parser.parse_args()
    variants = ("0", "1")
    with replicated(replicas=1) as group:
        stores = {
            wait: GameStore.from_config(
                Config.from_env({"REDIS_URL": group.primary.url, "REDIS_WAIT_REPLICAS": wait})
            )
            for wait in variants
        }
        versions = {}
        for wait, store in stores.items():
            store.create(f"bench-wait-{wait}", DOC, EVENTS)
            versions[wait] = 1
        times: dict[str, list[float]] = {wait: [] for wait in variants}
        for number in range(args.commits):
            for wait in variants if number % 2 else reversed(variants):
                started = time.perf_counter()
                versions[wait] = stores[wait].commit(
                    f"bench-wait-{wait}", versions[wait], DOC, EVENTS
                )
                times[wait].append((time.perf_counter() - started) * 1000)
    for wait in variants:
        cuts = statistics.quantiles(times[wait], n=100)
        print(
            f"REDIS_WAIT_REPLICAS={wait}: commit median {statistics.median(times[wait]):.3f} ms, "
            f"p90 {cuts[89]:.3f} ms, p99 {cuts[98]:.3f} ms ({args.commits} commits)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
