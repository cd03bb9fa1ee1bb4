"""GameStore on each kind of server: keys of a game in one cluster slot, a closed port
and a crashed server (StoreUnavailable, then back after a restart), the embedded
default, and a real Redis Cluster."""

from __future__ import annotations

import time
from contextlib import ExitStack

import pytest
from redis.cluster import RedisCluster, key_slot

from harness.ports import free_port
from harness.redis_cluster import start_cluster
from harness.redis_server import RedisServer, redis_server_binary
from service.config import Config
from service.store import (
    GameStore,
    IdempotentReplay,
    StoreUnavailable,
    VersionConflict,
    connect,
    key,
)
from service.store import redis_client as client_module
from service.store.history import event_id
from tests.store.games import commit_later, confirmed, new_id, published

needs_redis_server = pytest.mark.skipif(
    redis_server_binary() is None, reason="needs redis-server on PATH"
)


def test_all_keys_of_a_game_share_one_cluster_slot() -> None:
    gid = new_id()
    parts = ["state", "events", "idem:" + "f" * 64, "anything"]
    assert len({key_slot(key(gid, part).encode()) for part in parts}) == 1
    assert key(gid, "state") == f"t13:{{{gid}}}:state"
    with pytest.raises(ValueError):
        key("a}b", "state")


def test_store_unavailable_on_a_closed_port() -> None:
    store = GameStore.from_config(
        Config.from_env({"REDIS_URL": f"redis://127.0.0.1:{free_port()}"})
    )
    assert store.ping() is False
    calls = [
        lambda: store.create("g", b"d"),
        lambda: store.load_game("g"),
        lambda: store.commit("g", 1, b"d", idempotency=("k", b"f", b"r")),
        lambda: store.load_with_idempotency("g", "k")[1],
        lambda: store.load_with_idempotency("g", "k"),
        lambda: store.events("g", 0),
    ]
    for call in calls:
        with pytest.raises(StoreUnavailable):
            call()


@needs_redis_server
def test_store_unavailable_after_a_crash_and_back_after_restart() -> None:
    with RedisServer(extra_args=("--appendonly", "yes", "--appendfsync", "always")) as server:
        store = GameStore.from_config(Config.from_env({"REDIS_URL": server.url}))
        store.create("g", b"d", [b"e"])
        server.kill()
        assert store.ping() is False
        with pytest.raises(StoreUnavailable):
            store.load_game("g")
        server.start()
        # The AOF kept the game; the client reconnects by itself.
        assert store.load_game("g") == (1, b"d", None)
        assert store.commit("g", 1, b"d2", [b"e2"]) == 2
        assert store.events("g", 0)[:2] == ([(1, b"e"), (2, b"e2")], 2)


def test_embedded_default_runs_the_scripts(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_module, "_embedded_server", None)
    store = GameStore.from_config(Config.from_env({}))
    with caplog.at_level("WARNING"):
        assert store.ping()
    assert "not for production" in caplog.text
    other = GameStore.from_config(Config.from_env({}))  # same in-process server
    gid = new_id()
    store.create(gid, b"d", [b"e", (b"private", 0)])
    assert other.load_game(gid) == (1, b"d", None)
    with pytest.raises(VersionConflict):
        other.commit(gid, 5, b"x")
    with store.watch(gid) as watch:
        confirmed(watch)
        thread = commit_later(other, gid, 1, [b"later"], 0.3)
        assert published(watch, 2)[0] == ([(3, b"later")], 3, None)
        assert store.events(gid, 2)[:2] == ([(3, b"later")], 3)
    thread.join()
    assert store.events(gid, 0, seat=0)[:2] == ([(1, b"e"), (2, b"private"), (3, b"later")], 3)
    written = store.commit(gid, 2, b"d3", idempotency=("k", b"f", b"r"))
    last = event_id(written.last.seq, written.last.tag or "").encode()
    with pytest.raises(IdempotentReplay) as again:
        store.commit(gid, 3, b"d4", idempotency=("k", b"f", b"r"))
    assert again.value.last == last and last.startswith(b"3.")
    assert store.load_with_idempotency(gid, "k") == ((3, b"d3", None), (b"f", b"r", last))


@needs_redis_server
def test_store_on_a_redis_cluster() -> None:
    with start_cluster(3) as servers:
        cfg = Config.from_env({"REDIS_URL": servers[0].url, "REDIS_CLUSTER": "true"})
        client = connect(cfg)
        assert isinstance(client, RedisCluster)
        store = GameStore(client, config=cfg)
        assert store.ping()
        ids = [new_id() for _ in range(20)]  # spread over the nodes' slots
        assert len({key_slot(key(gid, "state").encode()) * 3 // 16384 for gid in ids}) > 1
        for gid in ids:
            store.create(gid, b"d", [b"e"])
            written = store.commit(gid, 1, b"d2", [(b"p", 1)], idempotency=("k", b"f", b"r"))
            assert written == 2 and written.last.seq == 2
            assert store.load_game(gid) == (2, b"d2", None)
            assert store.events(gid, 0, seat=1)[:2] == ([(1, b"e"), (2, b"p")], 2)
            last = event_id(2, written.last.tag or "").encode()
            assert store.load_with_idempotency(gid, "k") == ((2, b"d2", None), (b"f", b"r", last))
        with ExitStack() as watching:  # games on every node, each woken by its own commit
            watches = [watching.enter_context(store.watch(gid)) for gid in ids]
            for watch in watches:
                confirmed(watch)
            threads = [commit_later(store, gid, 2, [b"later"], 0.3) for gid in ids]
            for watch in watches:
                assert published(watch, 2)[0] == ([(3, b"later")], 3, None)
            assert store.events(ids[0], 2)[:2] == ([(3, b"later")], 3)
        for thread in threads:
            thread.join()
        client.close()


@needs_redis_server
def test_a_watch_is_told_to_read_after_its_subscriber_reconnects() -> None:
    """Redis restarts under a watch: a commit made before the subscription is back is
    still read (the new subscription's confirmation wakes the watch to read)."""
    with RedisServer(extra_args=("--appendonly", "yes", "--appendfsync", "always")) as server:
        server.start()
        store = GameStore.from_config(Config.from_env({"REDIS_URL": server.url}))
        store.create("g", b"d", [b"e"])
        with store.watch("g") as watch:
            confirmed(watch)
            server.stop()
            server.start()
            assert store.commit("g", 1, b"d2", [b"e2"]) == 2
            deadline = time.monotonic() + 10
            while True:  # handed the write, or told to read (the new subscription)
                assert watch.wait(deadline - time.monotonic()), "never told to read again"
                page = watch.take(1, None)
                if page is None or page.events:
                    break
        assert store.events("g", 1)[:2] == ([(2, b"e2")], 2)
