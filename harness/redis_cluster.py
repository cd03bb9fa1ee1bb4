"""A throwaway Redis Cluster: a few private ``redis-server`` nodes, all slots assigned.

with start_cluster() as servers:
    client = RedisCluster.from_url(servers[0].url)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import redis

from harness.ports import free_cluster_port
from harness.redis_server import RedisServer


@contextlib.contextmanager
def start_cluster(masters: int = 3, replicas: int = 0) -> Iterator[list[RedisServer]]:
    """A Redis Cluster of ``masters`` nodes with all 16384 slots assigned, and
    ``replicas`` replicas of each (in sync).

    Yields the servers, masters first (then the replicas of master 0, of master
    1...); connect with ``RedisCluster.from_url(servers[0].url)``.  Every node is
    stopped by its PID and its directory deleted afterwards.
    """
    servers: list[RedisServer] = []
    nodes = masters * (1 + replicas)
    try:
        for _ in range(nodes):
            server = RedisServer(
                port=free_cluster_port(),
                extra_args=(
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "2000",
                ),  # fmt: skip
            )
            servers.append(server.start())
        clients = [server.client() for server in servers]
        per = 16384 // masters
        for i, client in enumerate(clients[:masters]):
            last = 16383 if i == masters - 1 else (i + 1) * per - 1
            client.execute_command("CLUSTER ADDSLOTSRANGE", i * per, last)
            client.execute_command("CLUSTER SET-CONFIG-EPOCH", i + 1)
        for server in servers[1:]:
            clients[0].execute_command("CLUSTER MEET", "127.0.0.1", server.port)
        _wait(lambda: all(cluster_ok(client, nodes) for client in clients), "converge")
        for n, client in enumerate(clients[masters:]):
            master_id = clients[n // replicas].execute_command("CLUSTER MYID")
            _wait(lambda c=client, m=master_id: _replicate(c, m), "take a replica")
        for server in servers[masters:]:
            _wait(lambda s=server: _synced(s), "sync a replica")
        for client in clients:
            client.close()
        yield servers
    finally:
        for server in servers:
            server.cleanup()


def _wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the test cluster did not {what}")
        time.sleep(0.1)


def _replicate(client: redis.Redis, master_id: Any) -> bool:
    """Make ``client``'s node a replica of ``master_id`` (once that node is known)."""
    try:
        client.execute_command("CLUSTER REPLICATE", master_id)
    except redis.ResponseError:  # "Unknown node": gossip has not told it yet
        return False
    return True


def _synced(server: RedisServer) -> bool:
    client = server.client()
    try:
        return client.info("replication").get("master_link_status") == "up"
    finally:
        client.close()


def cluster_ok(client: redis.Redis, masters: int) -> bool:
    """Whether the node behind ``client`` sees a healthy cluster of ``masters`` nodes."""
    info = client.execute_command("CLUSTER INFO")
    text = info.decode() if isinstance(info, bytes) else str(info)
    if isinstance(info, dict):
        text = "\n".join(f"{k}:{v}" for k, v in info.items())
    return "cluster_state:ok" in text and f"cluster_known_nodes:{masters}" in text
