"""What the epoch of an event's tag costs the commit script, inside Redis.

    .venv/bin/python bench/commit_script.py [--commits 2000] [--rounds 7]

On one redis-server, commits of a 3 KB document with two events by the commit
script as the service runs it (the epoch read with ``INFO`` and hashed) and by
the same script with a constant epoch (the embedded store's), in alternating
rounds; prints the median of each round's ``usec_per_call`` of ``EVALSHA``
(``INFO commandstats``: the time Redis spends in the script, not the round
trip).  The server is stopped by PID.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from redis import Redis  # noqa: E402

from harness.redis_server import RedisServer  # noqa: E402
from service.store import StoredEvent  # noqa: E402
from service.store.history import Chain, link  # noqa: E402
from service.store.keys import EVENTS, STATE, key  # noqa: E402
from service.store.script_args import script_input  # noqa: E402
from service.store.scripts import COMMIT_SCRIPT, EMBEDDED_COMMIT_SCRIPT  # noqa: E402

DOC = b"x" * 3000
MOVE: list[StoredEvent] = [
    b'{"type":"drew","seat":1,"source":"stock"}',
    (b'{"type":"drew","card":"7H"}', 1),
]


def _round(redis: Redis, sha: str, game_id: str, commits: int) -> float:
    """usec_per_call of ``commits`` commits of ``game_id`` by the script ``sha``."""
    redis.delete(key(game_id, STATE), key(game_id, EVENTS))
    chain = Chain("00" * 16, "")
    redis.hset(key(game_id, STATE), mapping={"v": 1, "s": 0, "n": "", "k": chain.key, "h": ""})
    redis.config_resetstat()
    for version in range(1, commits + 1):
        digests, head = link(chain, MOVE)
        chain = Chain(chain.key, head)
        key_list, args = script_input(
            game_id, [version, DOC, 3600, DOC[:1500], ""], [b"", b"", head], MOVE, digests, None, 0
        )
        redis.evalsha(sha, len(key_list), *key_list, *args)
    stats = redis.info("commandstats")["cmdstat_evalsha"]
    return float(stats["usec_per_call"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=2000, help="commits a round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of each variant")
    args = parser.parse_args()
    results: dict[str, list[float]] = {"server epoch (INFO)": [], "constant epoch": []}
    with RedisServer() as server:
        client = server.client()
        scripts = {
            "server epoch (INFO)": client.script_load(COMMIT_SCRIPT),
            "constant epoch": client.script_load(EMBEDDED_COMMIT_SCRIPT),
        }
        for number in range(args.rounds):
            order = list(scripts) if number % 2 == 0 else list(reversed(scripts))
            for name in order:
                results[name].append(_round(client, scripts[name], "bench", args.commits))
        client.close()
    for name, values in results.items():
        rounds = ", ".join(f"{value:.1f}" for value in values)
        print(f"{name:22} median {statistics.median(values):6.1f} µs a commit  ({rounds})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
