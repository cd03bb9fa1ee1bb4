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
import redis

from harness.redis_replication import MASTER_NAME, Replicated, replicated
from harness.redis_server import redis_server_binary
from service.api.limits import Limit, RateLimits
from service.config import Config
from service.store import GameStore, StoreUnavailable, VersionConflict
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
    """The role ``port`` says it has (asked again if the connection is cut: a
    Sentinel demoting a primary disconnects its clients)."""
    deadline = time.monotonic() + 20
    while True:
        client = group.by_port(port).client()
        try:
            return str(client.info("replication")["role"])
        except (redis.ConnectionError, redis.TimeoutError):
            assert time.monotonic() < deadline, f"{port} does not answer"
            time.sleep(0.05)
        finally:
            client.close()


def ask_failover(group: Replicated) -> int:
    """Ask a Sentinel for a failover (``SENTINEL FAILOVER``, the old primary kept
    up); the old primary's port."""
    old = group.primary.port
    sentinel = group.sentinels[0].client()
    try:
        sentinel.execute_command("SENTINEL", "FAILOVER", MASTER_NAME)
    finally:
        sentinel.close()
    return old


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
    old = ask_failover(group)
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


FOLLOW_WITHIN_SECONDS = 3.0
"""How soon after the Sentinels name a new primary the store must be writing to
it (it asks them every second; the margin is for a loaded machine)."""


def _named_by_most(group: Replicated) -> int | None:
    """The port a majority of the Sentinels name as the primary now, if any."""
    named: dict[int, int] = {}
    for sentinel in group.sentinels:
        try:
            address = sentinel.primary()
        except (redis.ConnectionError, redis.TimeoutError):
            continue
        if address is not None:
            named[address[1]] = named.get(address[1], 0) + 1
    return next((port for port, n in named.items() if n > len(group.sentinels) // 2), None)


def _subscribed(group: Replicated, port: int, channel: str) -> bool:
    client = group.by_port(port).client()
    try:
        return int(client.execute_command("PUBSUB", "SHARDNUMSUB", channel)[1]) == 1
    finally:
        client.close()


def test_the_store_leaves_a_deposed_primary_still_up_for_the_one_named(
    group: Replicated,
) -> None:
    """``SENTINEL FAILOVER`` (or a primary cut off but still up): the old primary
    keeps accepting writes for some 10 s until the Sentinels make it a replica
    of the new one, and everything written to it meanwhile is then lost.  Its
    connections keep working, so nothing fails to make the store ask the
    Sentinels again: it asks them every second itself, leaves the deposed
    primary for the one they name within seconds, writes there, and its
    waiters' subscription moves there too -- before the old one is demoted."""
    store = GameStore.from_config(sentinel_config(group))
    gid = new_id()
    store.create(gid, b"doc", [b"e0"])
    channel = wake_channel(gid)
    acknowledged: list[tuple[float, bytes]] = []
    number = 0

    def write() -> None:
        nonlocal number
        number += 1
        body = f"e{number}".encode()
        while True:
            found, _refused = until_served(lambda: store.load_game(gid))
            assert found is not None
            try:
                until_served(lambda v=found[0]: store.commit(gid, v, b"doc", [body]))
            except VersionConflict:  # moved to the other primary between the two
                continue
            acknowledged.append((time.monotonic(), body))
            return

    with store.watch(gid) as watch:
        confirmed(watch)
        for _ in range(3):
            write()
        old = ask_failover(group)
        named_at: float | None = None
        new: int | None = None
        subscribed_at: float | None = None
        woken = False
        deadline = time.monotonic() + 60
        while _role(group, old) == "master":  # writing on, until it is demoted
            assert time.monotonic() < deadline, "the old primary was not demoted"
            write()
            if named_at is None:
                found_port = _named_by_most(group)
                if found_port is not None and found_port != old:
                    named_at, new = time.monotonic(), found_port
            elif subscribed_at is None and _subscribed(group, new or 0, channel):
                subscribed_at = time.monotonic()
            elif subscribed_at is not None and not woken:
                # a commit on the new primary wakes the waiter, events and all
                watch.wait(0)
                watch.take(0, None)  # what came before: other writes, the resubscription
                cursor = store.all_events(gid)[-1][0]
                write()
                page, _took = published(watch, cursor, timeout=10)
                assert page.events[0] == (cursor + 1, acknowledged[-1][1])
                woken = True
        demoted_at = time.monotonic()
        for _ in range(3):
            write()
    assert named_at is not None and new is not None, "the Sentinels never named a new primary"
    kept = {event for _seq, event in store.all_events(gid)}
    lost = [(at, body) for at, body in acknowledged if body not in kept]
    late = [body for at, body in lost if at > named_at + FOLLOW_WITHIN_SECONDS]
    window = [at for at, _ in acknowledged if named_at + FOLLOW_WITHIN_SECONDS < at < demoted_at]
    last_lost = max((at for at, _ in lost), default=named_at) - named_at
    print(
        f"\nSENTINEL FAILOVER: the old primary demoted {demoted_at - named_at:.2f} s after "
        f"the new one was named; {len(acknowledged)} commits acknowledged, {len(lost)} lost "
        f"(the last acknowledged {last_lost:+.2f} s from the naming); subscribed on the new "
        f"primary {(subscribed_at or demoted_at) - named_at:+.2f} s from it"
    )
    assert window, "no commit between the store's switch and the demotion: nothing was shown"
    assert not late, f"{len(late)} commits acknowledged by the deposed primary were lost"
    assert subscribed_at is not None and subscribed_at < named_at + FOLLOW_WITHIN_SECONDS + 2.0
    assert woken, "no wake-up from the new primary before the old one was demoted"
    assert _role(group, new) == "master"
