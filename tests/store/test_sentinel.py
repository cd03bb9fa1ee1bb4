"""The store behind Redis Sentinel (``REDIS_SENTINELS``): it follows a promoted
replica by itself -- its writes, reads, waiting clients' wake-ups and the rate
limiter's counters -- after the primary dies, and after a primary still alive is
demoted (``SENTINEL FAILOVER``: its connections answer ``READONLY`` then).

A primary, two replicas and three Sentinels on free ports (``down-after`` 1 s),
all stopped by PID; the service's client finds the primary only through the
Sentinels (``REDIS_URL`` names a host that does not exist).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from harness.redis_replication import MASTER_NAME, Replicated, replicated
from harness.redis_server import redis_server_binary
from service.api.limits import Limit, RateLimits
from service.config import Config
from service.store import GameStore, StoreUnavailable
from service.store.keys import wake_channel
from tests.store.games import confirmed, new_id, published

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason="needs redis-server on PATH")

T = TypeVar("T")


@pytest.fixture
def group() -> Iterator[Replicated]:
    with replicated(replicas=2, sentinels=3) as found:
        yield found


def sentinel_config(group: Replicated, **env: str) -> Config:
    return Config.from_env(
        {
            "REDIS_URL": "redis://primary.invalid:6379/0",  # never used: the Sentinels say
            "REDIS_SENTINELS": group.sentinel_addresses,
            "REDIS_SENTINEL_MASTER": MASTER_NAME,
            **env,
        }
    )


def until_served(call: Callable[[], T], timeout: float = 60) -> tuple[T, int]:
    """``call()`` retried while the store is unavailable: its result, and how many
    times it was refused first."""
    deadline = time.monotonic() + timeout
    refused = 0
    while True:
        try:
            return call(), refused
        except StoreUnavailable:
            refused += 1
            assert time.monotonic() < deadline, "the store never came back"
            time.sleep(0.05)


def _role(group: Replicated, port: int) -> str:
    client = group.by_port(port).client()
    try:
        return str(client.info("replication")["role"])
    finally:
        client.close()


def test_the_store_follows_the_promoted_replica_after_the_primary_dies(
    group: Replicated,
) -> None:
    store = GameStore.from_config(sentinel_config(group, REDIS_WAIT_REPLICAS="1"))
    gid = new_id()
    store.create(gid, b"doc", [b"e1"])
    version = store.commit(gid, 1, b"doc", [b"e2"])
    with store.watch(gid) as watch:
        confirmed(watch)
        old = group.primary.port
        group.primary.kill()
        version, refused = until_served(lambda: store.commit(gid, version, b"doc", [b"e3"]))
        assert refused > 0  # it did meet the outage
        new = group.named_primary()
        assert new is not None and new != old and _role(group, new) == "master"
        # the waiter was woken to read again (its subscriber failed)...
        assert watch.wait(10)
        watch.take(3, None)
        # ... its subscription is made anew on the new primary...
        promoted = group.by_port(new).client()
        try:
            channel = wake_channel(gid)
            deadline = time.monotonic() + 20
            while promoted.execute_command("PUBSUB", "SHARDNUMSUB", channel)[1] != 1:
                assert time.monotonic() < deadline, "not subscribed on the new primary"
                time.sleep(0.05)
        finally:
            promoted.close()
        # every failed attempt to resubscribe woke it before the one that succeeded
        # (each "read the stream": take() says None); those are all in now: see them
        watch.wait(0)
        watch.take(3, None)
        # ... where the next write's publish wakes it, events and all
        version = store.commit(gid, version, b"doc", [b"e4"])
        page, _took = published(watch, 3)
        assert page.events == [(4, b"e4")]
    assert store.load_game(gid) == (version, b"doc", None)
    assert [e for _seq, e in store.all_events(gid)] == [b"e1", b"e2", b"e3", b"e4"]


def test_a_demoted_primary_is_left_for_the_new_one(group: Replicated) -> None:
    """``SENTINEL FAILOVER``: the old primary lives on as a replica; connections
    still open to it answer writes ``READONLY`` and are dropped for the new one."""
    store = GameStore.from_config(sentinel_config(group))
    gid = new_id()
    store.create(gid, b"doc", [b"e1"])
    version = 1
    for _ in range(3):  # the pool holds connections to the primary now
        version = store.commit(gid, version, b"doc", [b"e"])
    old = group.primary.port
    sentinel = group.sentinels[0].client()
    try:
        sentinel.execute_command("SENTINEL", "FAILOVER", MASTER_NAME)
    finally:
        sentinel.close()
    group.wait_for_promotion(old)
    deadline = time.monotonic() + 30
    while _role(group, old) != "slave":
        assert time.monotonic() < deadline, "the old primary was not demoted"
        time.sleep(0.05)
    for _ in range(3):
        version, _refused = until_served(lambda v=version: store.commit(gid, v, b"doc", [b"e"]))
    new = group.by_port(group.named_primary() or 0).client()
    try:
        assert int(new.hget(f"t13:{{{gid}}}:state", "v")) == version
    finally:
        new.close()


def test_the_rate_limiter_counts_on_the_promoted_replica(group: Replicated) -> None:
    config = sentinel_config(group)
    limits = RateLimits.from_config(config)
    assert limits is not None
    limit = Limit.parse("moves", "1000/minute")
    strategy = limits.limiter.main  # the Redis one, not the in-memory fallback
    assert strategy.hit(limit.items[0], "t13rl", "moves", "tok:a")
    group.primary.kill()
    until_served(lambda: _hit_or_unavailable(strategy, limit))
    promoted = group.by_port(group.named_primary() or 0).client()
    try:
        assert promoted.keys("*t13rl*")  # the counter lives on the new primary
    finally:
        promoted.close()


def _hit_or_unavailable(strategy: object, limit: Limit) -> bool:
    try:
        return bool(strategy.hit(limit.items[0], "t13rl", "moves", "tok:a"))  # type: ignore[attr-defined]
    except Exception as exc:  # the storage's own errors while no primary answers
        raise StoreUnavailable(str(exc)) from exc
