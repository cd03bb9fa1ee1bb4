"""Throwaway replicated Redis: a primary, replicas, and Redis Sentinels watching them.

    with replicated(replicas=1) as group:           # primary + 1 replica
        group.primary.url, group.replicas[0].url
    with replicated(replicas=2, sentinels=3) as group:
        group.sentinel_addresses  # "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3"
        group.primary.kill(); group.wait_for_promotion()

Every process is a private ``redis-server`` (Sentinels are ``redis-server <conf>
--sentinel``, the same binary) on a free 127.0.0.1 port, stopped by its PID and
its directory deleted afterwards; nothing else is touched.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import redis

from harness.redis_server import RedisServer

MASTER_NAME = "t13primary"
"""The name the Sentinels monitor the primary under."""

DOWN_AFTER_MS = 1000
"""A Sentinel deems a server down after this long without a valid reply."""


class SentinelServer(RedisServer):
    """One Redis Sentinel monitoring the primary at ``primary_port`` as :data:`MASTER_NAME`."""

    def __init__(self, primary_port: int, quorum: int, down_after_ms: int = DOWN_AFTER_MS):
        super().__init__()
        self.config = self.dir / "sentinel.conf"
        self.config.write_text(
            "\n".join(
                [
                    f"port {self.port}",
                    "bind 127.0.0.1",
                    f"dir {self.dir}",
                    f"logfile {self.dir / 'redis.log'}",
                    f"sentinel monitor {MASTER_NAME} 127.0.0.1 {primary_port} {quorum}",
                    f"sentinel down-after-milliseconds {MASTER_NAME} {down_after_ms}",
                    f"sentinel failover-timeout {MASTER_NAME} 10000",
                    f"sentinel parallel-syncs {MASTER_NAME} 1",
                    "",
                ]
            )
        )

    def arguments(self) -> list[str]:
        return [self.binary, str(self.config), "--sentinel", "--port", str(self.port)]

    def primary(self) -> tuple[str, int] | None:
        """The primary's address as this Sentinel names it now."""
        client = self.client(socket_timeout=1, socket_connect_timeout=1)
        try:
            found = client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
        finally:
            client.close()
        if not found:
            return None
        host, port = found
        return (host.decode() if isinstance(host, bytes) else host), int(port)

    def state(self) -> dict[str, str]:
        """This Sentinel's view of the primary (``SENTINEL MASTER``), as text."""
        client = self.client(socket_timeout=1, socket_connect_timeout=1, decode_responses=True)
        try:
            reply = client.execute_command("SENTINEL", "MASTER", MASTER_NAME)
        finally:
            client.close()
        if isinstance(reply, dict):
            return {str(k): str(v) for k, v in reply.items()}
        return {str(reply[i]): str(reply[i + 1]) for i in range(0, len(reply), 2)}


def start_replica(primary: RedisServer, extra_args: Sequence[str] = ()) -> RedisServer:
    """A replica of ``primary``, started and in sync."""
    replica = RedisServer(
        extra_args=("--replicaof", "127.0.0.1", str(primary.port), *extra_args)
    ).start()
    wait_until(lambda: link_up(replica), 20, f"replica {replica.port} never synced")
    return replica


def link_up(replica: RedisServer) -> bool:
    """Whether ``replica`` is connected to its primary and synced."""
    client = replica.client()
    try:
        info = client.info("replication")
    finally:
        client.close()
    return info.get("role") == "slave" and info.get("master_link_status") == "up"


def wait_until(condition: Callable[[], object], timeout: float, message: str) -> None:
    """Poll ``condition()`` until true; fail with ``message`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if condition():
                return
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(message)
        time.sleep(0.05)


@dataclass
class Replicated:
    """A primary, its replicas and the Sentinels watching them (possibly none)."""

    primary: RedisServer
    replicas: list[RedisServer]
    sentinels: list[SentinelServer] = field(default_factory=list)

    @property
    def sentinel_addresses(self) -> str:
        """``REDIS_SENTINELS`` for these Sentinels."""
        return ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)

    def servers(self) -> list[RedisServer]:
        return [self.primary, *self.replicas]

    def by_port(self, port: int) -> RedisServer:
        return next(server for server in self.servers() if server.port == port)

    def named_primary(self) -> int | None:
        """The port every live Sentinel names as the primary, if they agree."""
        named = {s.primary() for s in self.sentinels if s.process is not None}
        if len(named) != 1:
            return None
        (address,) = named
        return None if address is None else address[1]

    def wait_for_promotion(self, old_port: int, timeout: float = 60) -> RedisServer:
        """Wait until the Sentinels name a primary other than ``old_port`` and it
        answers as one; that server."""
        found: list[RedisServer] = []

        def promoted() -> bool:
            port = self.named_primary()
            if port is None or port == old_port:
                return False
            server = self.by_port(port)
            client = server.client()
            try:
                if client.info("replication").get("role") != "master":
                    return False
            finally:
                client.close()
            found.append(server)
            return True

        wait_until(promoted, timeout, "the Sentinels did not promote a replica")
        return found[-1]

    def sentinels_ready(self) -> bool:
        """Whether every Sentinel knows the others and every replica (a failover
        needs both)."""
        want_replicas = str(len(self.replicas))
        want_others = str(len(self.sentinels) - 1)
        for sentinel in self.sentinels:
            state = sentinel.state()
            if state.get("num-slaves") != want_replicas:
                return False
            if state.get("num-other-sentinels") != want_others:
                return False
        return True


@contextlib.contextmanager
def replicated(
    replicas: int = 1,
    sentinels: int = 0,
    primary_args: Sequence[str] = (),
    replica_args: Sequence[str] = (),
    down_after_ms: int = DOWN_AFTER_MS,
) -> Iterator[Replicated]:
    """A primary with ``replicas`` in sync and ``sentinels`` Sentinels (quorum: a
    majority) that know one another and every replica.  Everything is stopped by
    PID and deleted afterwards."""
    started: list[RedisServer] = []
    try:
        primary = RedisServer(extra_args=tuple(primary_args)).start()
        started.append(primary)
        group = Replicated(primary, [])
        for _ in range(replicas):
            group.replicas.append(start_replica(primary, replica_args))
            started.append(group.replicas[-1])
        quorum = sentinels // 2 + 1
        for _ in range(sentinels):
            sentinel = SentinelServer(primary.port, quorum, down_after_ms)
            started.append(sentinel)
            group.sentinels.append(sentinel.start())
        if sentinels:
            wait_until(group.sentinels_ready, 60, "the Sentinels did not find one another")
        yield group
    finally:
        for server in reversed(started):
            server.cleanup()
