"""The store on a Redis that stops answering (SIGSTOP), plain and Redis Cluster.

Inside a request's budget (what the WSGI middleware opens), every store call --
reads, writes, the long poll, the readiness ping -- gives up with
:class:`StoreUnavailable` (ping: False) within the budget, whatever the retries
inside; once one has timed out, the next fail at once (the circuit breaker, on a plain Redis);
after SIGCONT the store works again by itself.  On a Redis Cluster each call is
bounded the same way.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from harness.redis_cluster import start_cluster
from harness.redis_server import RedisServer, redis_server_binary
from service.config import Config
from service.store import GameStore, StoreUnavailable
from service.store.budget import close_budget, open_budget

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason="needs redis-server")

BUDGET = 1.0
BOUND = 2.5  # generous: the budget, plus scheduling on a busy machine


def _stop(servers: list[RedisServer]) -> None:
    for server in servers:
        assert server.pid is not None
        os.kill(server.pid, signal.SIGSTOP)


def _resume(servers: list[RedisServer]) -> None:
    for server in servers:
        if server.pid is not None:
            os.kill(server.pid, signal.SIGCONT)


def _within_budget(call: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``call`` in a request budget of BUDGET: (seconds taken, result or error)."""
    token = open_budget(BUDGET)
    started = time.monotonic()
    try:
        result: Any = call()
    except StoreUnavailable as exc:
        result = exc
    finally:
        close_budget(token)
    return time.monotonic() - started, result


def _calls(store: GameStore, gid: str) -> list[Callable[[], Any]]:
    return [
        lambda: store.load_public(gid),
        lambda: store.load_with_idempotency(gid, "k"),
        lambda: store.commit(gid, 1, b"d2", [b"e2"]),
        lambda: store.create(uuid.uuid4().hex, b"d", [b"e"]),
        lambda: store.events(gid, 1),
        lambda: store.create(uuid.uuid4().hex, b"d", idempotency=("k", b"f", b"r")),
    ]


def _check_stall(
    store: GameStore, servers: list[RedisServer], gid: str, fail_fast: bool = True
) -> None:
    _stop(servers)
    try:
        took, answer = _within_budget(store.ping)
        assert answer is False and took < BOUND, took
        for call in _calls(store, gid):
            took, answer = _within_budget(call)
            assert isinstance(answer, StoreUnavailable), answer
            assert took < BOUND, took
        if fail_fast:  # the breaker is open now: the next call does not wait at all
            took, answer = _within_budget(_calls(store, gid)[0])
            assert isinstance(answer, StoreUnavailable) and took < 0.2, took
    finally:
        _resume(servers)
    deadline = time.monotonic() + 10
    while _within_budget(store.ping)[1] is not True:
        assert time.monotonic() < deadline, "the store did not recover"
        time.sleep(0.1)
    assert _within_budget(lambda: store.load_game(gid))[1] == (1, b"d", None)


@pytest.fixture
def server() -> Iterator[RedisServer]:
    with RedisServer() as running:
        try:
            yield running
        finally:
            _resume([running])


def test_plain_redis_stall_costs_at_most_the_budget(server: RedisServer) -> None:
    store = GameStore.from_config(Config.from_env({"REDIS_URL": server.url}))
    gid = uuid.uuid4().hex
    store.create(gid, b"d", [b"e"])
    assert store.load_public(gid) is not None  # the pool has a connection
    _check_stall(store, [server], gid)


def test_redis_cluster_stall_costs_at_most_the_budget() -> None:
    with start_cluster(3) as servers:
        try:
            cfg = Config.from_env({"REDIS_URL": servers[0].url, "REDIS_CLUSTER": "true"})
            store = GameStore.from_config(cfg)
            gid = uuid.uuid4().hex
            store.create(gid, b"d", [b"e"])
            # one breaker per node, and a failed node sends the cluster client to
            # the others for the topology: bounded by the budget, not always at once
            _check_stall(store, servers, gid, fail_fast=False)
        finally:
            _resume(servers)
