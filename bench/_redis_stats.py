"""Redis statistics of the HTTP benchmark: commands and round trips per move.

``redis_counters`` reads ``INFO commandstats`` and ``INFO stats`` before and
after the move runs; ``round_trips`` turns the difference into commands and
client round trips per move.
"""

from __future__ import annotations

from typing import Any

import redis

MAX_ROUND_TRIPS_PER_MOVE = 2.0


def redis_counters(client: redis.Redis) -> dict[str, int]:
    info = client.info("commandstats")
    counts = {
        name.removeprefix("cmdstat_"): int(v["calls"])
        for name, v in info.items()
        if isinstance(v, dict)
    }
    stats = client.info("stats")
    counts["__reads_processed"] = int(stats["total_reads_processed"])
    return counts


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


def round_trips(total: dict[str, int], moves: int) -> dict[str, Any]:
    """Per move: every command's calls, and the client round trips.

    commandstats counts commands run inside a Lua script too.  The service
    reads with HMGET and writes with one EVALSHA of the commit script, which
    itself runs exactly one HMGET (no Idempotency-Key is sent here) plus
    XADD / HSET / EXPIRE.  So the round trips are EVALSHA + EVAL + the HMGETs
    that are not the script's own, plus any other read command.  Redis' own
    ``total_reads_processed`` (socket reads from clients) is the cross-check.
    """
    ours = ("info", "config|resetstat", "ping", "__reads_processed")
    # per connection, not per move: a recycled gunicorn worker opens new connections
    setup = ("hello", "client|setinfo", "client|setname", "select", "auth")
    cmds = {k: v for k, v in total.items() if k not in ours and k not in setup}
    scripts = cmds.get("evalsha", 0) + cmds.get("eval", 0)
    script_inner = {"hmget": scripts, "xadd": None, "hset": None, "expire": None}
    top_level = scripts
    for name, calls in cmds.items():
        if name in ("evalsha", "eval"):
            continue
        if name in script_inner:
            inner = script_inner[name]
            if inner is not None:
                top_level += max(0, calls - inner)
        else:
            top_level += calls
    reads = total.get("__reads_processed", 0)
    return {
        "moves": moves,
        "commands_per_move": {k: round(v / moves, 3) for k, v in sorted(cmds.items())},
        "round_trips_per_move": round(top_level / moves, 3) if moves else float("nan"),
        "connection_setup_commands": {k: v for k, v in total.items() if k in setup},
        "socket_reads_per_move": reads / moves if moves else float("nan"),
        "target": MAX_ROUND_TRIPS_PER_MOVE,
    }
