"""The instance under test, seen from outside: its Redis connections and its memory.

:func:`redis_clients` reads ``CLIENT LIST`` on the benchmark's own throwaway
Redis, leaves out the benchmark's own connection (named :data:`BENCH_NAME`)
and attributes every other one to the process holding it: the client's
address is looked up in ``/proc/net/tcp`` (its socket inode) and that inode
among the open files of the gunicorn master and workers.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from pathlib import Path
from typing import Any

import redis

from harness.proc_stats import rss_kb

BENCH_NAME = "t13-bench-realtime"


def bench_client(url: str) -> redis.Redis:
    client = redis.Redis.from_url(url, socket_timeout=10)
    client.client_setname(BENCH_NAME)
    return client


def _inodes_by_local_port(redis_port: int) -> dict[int, str]:
    """Socket inode of each IPv4 TCP connection to ``redis_port``, by its local port."""
    out = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if int(remote.split(":")[1], 16) == redis_port:
                out[int(local.split(":")[1], 16)] = inode
    return out


def _socket_inodes(pid: int) -> set[str]:
    found = set()
    fd_dir = f"/proc/{pid}/fd"
    with contextlib.suppress(OSError):
        for fd in os.listdir(fd_dir):
            with contextlib.suppress(OSError):
                target = os.readlink(f"{fd_dir}/{fd}")
                if target.startswith("socket:["):
                    found.add(target[8:-1])
    return found


def redis_clients(client: redis.Redis, redis_port: int, pids: list[int]) -> dict[str, Any]:
    """Connections to Redis other than the benchmark's, in total and per process of ``pids``."""
    listed = [c for c in client.client_list() if c.get("name") != BENCH_NAME]
    by_port = _inodes_by_local_port(redis_port)
    owner = {inode: pid for pid in pids for inode in _socket_inodes(pid)}
    per: Counter[str] = Counter()
    for entry in listed:
        port = int(str(entry["addr"]).rsplit(":", 1)[1])
        pid = owner.get(by_port.get(port, ""))
        per[str(pid) if pid else "other"] += 1
    kinds = Counter(_kind(entry) for entry in listed)
    return {"total": len(listed), "per_process": dict(per), "kinds": dict(kinds)}


def _kind(entry: dict[str, Any]) -> str:
    """pubsub (a subscription), blocked (in XREAD BLOCK and the like) or plain."""
    subscriptions = sum(int(entry.get(name, 0) or 0) for name in ("sub", "psub", "ssub"))
    if subscriptions:
        return "pubsub"
    return "blocked" if "b" in str(entry.get("flags", "")) else "plain"


def workers_rss_kb(pids: list[int]) -> int:
    return sum(rss_kb(pid) for pid in pids)
