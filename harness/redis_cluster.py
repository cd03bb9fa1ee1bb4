"""A throwaway Redis Cluster: a few private ``redis-server`` nodes, all slots assigned.

with start_cluster() as servers:
    client = RedisCluster.from_url(servers[0].url)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import redis

from harness.ports import free_cluster_port
from harness.redis_server import RedisServer


@contextlib.contextmanager
def start_cluster(masters: int = 3) -> Iterator[list[RedisServer]]:
    """A Redis Cluster of ``masters`` nodes (no replicas) with all 16384 slots assigned.

    Yields the servers; connect with ``RedisCluster.from_url(servers[0].url)``.
    Every node is stopped by its PID and its directory deleted afterwards.
    """
    servers: list[RedisServer] = []
    try:
        for _ in range(masters):
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
        for i, client in enumerate(clients):
            last = 16383 if i == masters - 1 else (i + 1) * per - 1
            client.execute_command("CLUSTER ADDSLOTSRANGE", i * per, last)
            client.execute_command("CLUSTER SET-CONFIG-EPOCH", i + 1)
        for server in servers[1:]:
            clients[0].execute_command("CLUSTER MEET", "127.0.0.1", server.port)
        deadline = time.monotonic() + 20
        while not all(cluster_ok(client, masters) for client in clients):
            if time.monotonic() > deadline:
                raise RuntimeError("the test cluster did not converge")
            time.sleep(0.1)
        for client in clients:
            client.close()
        yield servers
    finally:
        for server in servers:
            server.cleanup()


def cluster_ok(client: redis.Redis, masters: int) -> bool:
    """Whether the node behind ``client`` sees a healthy cluster of ``masters`` nodes."""
    info = client.execute_command("CLUSTER INFO")
    text = info.decode() if isinstance(info, bytes) else str(info)
    if isinstance(info, dict):
        text = "\n".join(f"{k}:{v}" for k, v in info.items())
    return "cluster_state:ok" in text and f"cluster_known_nodes:{masters}" in text
