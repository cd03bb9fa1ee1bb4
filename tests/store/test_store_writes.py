"""GameStore against a real redis-server (see tests/conftest.py), fakeredis and a cluster."""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest
import redis
from redis.cluster import RedisCluster, key_slot

from harness.ports import free_port
from harness.redis_cluster import start_cluster
from harness.redis_server import RedisServer, redis_server_binary
from service.config import Config
from service.store import (
    GameExists,
    GameNotFound,
    GameStore,
    IdempotentReplay,
    StoreUnavailable,
    VersionConflict,
    connect,
    key,
)
from service.store import client as client_module
from tests.lost_reply import LostReply

needs_redis_server = pytest.mark.skipif(
    redis_server_binary() is None, reason="needs redis-server on PATH"
)


def new_id() -> str:
    return uuid.uuid4().hex


def test_create_load_commit(store: GameStore) -> None:
    gid = new_id()
    assert store.load_game(gid) is None
    assert store.create(gid, b'{"schema":1,"n":0}', [b'{"type":"created"}']) == 1
    assert store.load_game(gid) == (1, b'{"schema":1,"n":0}', None)
    assert store.commit(gid, 1, b'{"schema":1,"n":1}', [(b'{"type":"moved"}', None)]) == 2
    assert store.commit(gid, 2, b'{"schema":1,"n":2}') == 3
    assert store.load_game(gid) == (3, b'{"schema":1,"n":2}', None)
    events, last = store.events(gid, 0)
    assert events == [(1, b'{"type":"created"}'), (2, b'{"type":"moved"}')]
    assert last == 2


def test_results_are_kept_apart_and_rewritten_only_when_given(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d1", public=b'{"id":1}', results=b"[]")
    assert store.load_game(gid) == (1, b"d1", b"[]")
    assert store.commit(gid, 1, b"d2", public=b'{"id":2}') == 2  # results unchanged
    assert store.load_game(gid) == (2, b"d2", b"[]")
    assert store.commit(gid, 2, b"d3", public=b'{"id":3}', results=b'[{"number":1}]') == 3
    assert store.load_game(gid) == (3, b"d3", b'[{"number":1}]')
    assert store.load_public(gid) == (3, None, b'{"id":3}', b'[{"number":1}]')
    other = new_id()
    store.create(other, b"d")  # none given: none stored (a document that holds its own)
    assert store.load_game(other) == (1, b"d", None)
    assert store.load_game(new_id()) is None


def test_create_twice_fails(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"a")
    with pytest.raises(GameExists):
        store.create(gid, b"b", [b"e"])
    assert store.load_game(gid) == (1, b"a", None)
    assert store.events(gid, 0) == ([], 0)


def test_a_keyed_create_saves_its_record_and_a_retry_finds_it(store: GameStore) -> None:
    gid = new_id()
    assert store.create(gid, b"a", [b"e"], idempotency=("h", b"fp", b"answer")) == 1
    assert store.load_with_idempotency(gid, "h") == ((1, b"a", None), (b"fp", b"answer"))
    with pytest.raises(IdempotentReplay) as replayed:
        store.create(gid, b"b", [b"e2"], idempotency=("h", b"fp2", b"other"))
    assert (replayed.value.fingerprint, replayed.value.response) == (b"fp", b"answer")
    with pytest.raises(GameExists):
        store.create(gid, b"b", idempotency=("other", b"fp", b"answer"))
    assert store.load_game(gid) == (1, b"a", None)
    assert store.events(gid, 0) == ([(1, b"e")], 1)
    ttl = store.client.ttl(key(gid, "idem"))
    assert 0 < ttl <= min(store.idempotency_ttl_seconds, store.game_ttl_seconds)


def test_unknown_game(store: GameStore) -> None:
    with pytest.raises(GameNotFound):
        store.commit("nope", 1, b"x")
    with pytest.raises(GameNotFound):
        store.events("nope", 0, wait_seconds=5)
    assert store.load_with_idempotency("nope", "h")[1] is None


def test_stale_version_conflicts_and_writes_nothing(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"v1")
    store.commit(gid, 1, b"v2", [b"e1"])
    with pytest.raises(VersionConflict) as info:
        store.commit(gid, 1, b"stale", [b"lost"], idempotency=("k", b"fp", b"resp"))
    assert info.value.current_version == 2
    assert store.load_game(gid) == (2, b"v2", None)
    assert store.events(gid, 0) == ([(1, b"e1")], 1)
    assert store.load_with_idempotency(gid, "k")[1] is None


def test_concurrent_commits_exactly_one_wins(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"start")
    threads = 16
    barrier = threading.Barrier(threads)
    wins: list[int] = []
    conflicts: list[int] = []

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            wins.append(store.commit(gid, 1, b"by %d" % i, [b"event %d" % i]))
        except VersionConflict as exc:
            conflicts.append(exc.current_version)

    workers = [threading.Thread(target=attempt, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert wins == [2]
    assert conflicts == [2] * (threads - 1)
    version, doc, _results = store.load_game(gid) or (0, b"", None)
    assert version == 2
    events, last = store.events(gid, 0)
    assert len(events) == 1 and last == 1
    assert events[0][1] == b"event " + doc.split()[-1]


def test_events_are_filtered_per_seat(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"dealt", (b"hand0", 0), (b"hand1", 1)])
    store.commit(gid, 1, b"d", [(b"drew0", 0), b"discard"])
    assert store.events(gid, 0) == ([(1, b"dealt"), (5, b"discard")], 5)
    assert store.events(gid, 0, seat=0) == ([(1, b"dealt"), (2, b"hand0"), (4, b"drew0"),
                                             (5, b"discard")], 5)  # fmt: skip
    assert store.events(gid, 0, seat=1) == ([(1, b"dealt"), (3, b"hand1"), (5, b"discard")], 5)
    # The cursor moves past other seats' private events.
    assert store.events(gid, 2, seat=1) == ([(3, b"hand1"), (5, b"discard")], 5)
    assert store.events(gid, 3, seat=1) == ([(5, b"discard")], 5)
    assert store.events(gid, 5, seat=1) == ([], 5)
    # A cursor beyond the end is clamped to the last seq.
    assert store.events(gid, 99) == ([], 5)
    # Pages of `limit` events.
    assert store.events(gid, 0, seat=0, limit=2) == ([(1, b"dealt"), (2, b"hand0")], 2)
    assert store.events(gid, 0, seat=1, limit=2) == ([(1, b"dealt")], 2)


def _commit_later(
    store: GameStore, gid: str, version: int, events: list, delay: float
) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        store.commit(gid, version, b"later", events)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_long_poll_returns_early_when_an_event_arrives(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"first"])
    thread = _commit_later(store, gid, 1, [b"second"], 0.3)
    started = time.monotonic()
    assert store.events(gid, 1, wait_seconds=10) == ([(2, b"second")], 2)
    assert 0.2 < time.monotonic() - started < 3
    thread.join()


def test_long_poll_ignores_other_seats_private_events(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d")
    threads = [
        _commit_later(store, gid, 1, [(b"secret", 1)], 0.2),
        _commit_later(store, gid, 2, [b"public"], 0.6),
    ]
    started = time.monotonic()
    assert store.events(gid, 0, seat=0, wait_seconds=10) == ([(2, b"public")], 2)
    assert 0.5 < time.monotonic() - started < 3
    for thread in threads:
        thread.join()


def test_long_poll_times_out_empty(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"e"])
    started = time.monotonic()
    assert store.events(gid, 1, wait_seconds=1.6) == ([], 1)
    assert 1.5 < time.monotonic() - started < 3.5
    # Past the chunk length (1 s) and with nothing to wait for, no wait at all.
    started = time.monotonic()
    assert store.events(gid, 0, wait_seconds=5) == ([(1, b"e")], 1)
    assert time.monotonic() - started < 0.5


def test_ttl_is_set_and_refreshed(store: GameStore, redis_client: redis.Redis) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"e"])
    state, events = key(gid, "state"), key(gid, "events")
    ttl = store.game_ttl_seconds
    assert ttl - 5 < redis_client.ttl(state) <= ttl
    assert ttl - 5 < redis_client.ttl(events) <= ttl
    redis_client.expire(state, 100)
    redis_client.expire(events, 100)
    store.commit(gid, 1, b"d2", idempotency=("abc", b"fp", b"resp"))
    assert ttl - 5 < redis_client.ttl(state) <= ttl
    assert ttl - 5 < redis_client.ttl(events) <= ttl
    idem_ttl = store.idempotency_ttl_seconds
    assert idem_ttl - 5 < redis_client.ttl(key(gid, "idem")) <= idem_ttl
    assert idem_ttl - 5 < redis_client.ttl(key(gid, "idem-order")) <= idem_ttl


def test_ttls_come_from_config(redis_client: redis.Redis, redis_url: str) -> None:
    cfg = Config.from_env(
        {"REDIS_URL": redis_url, "GAME_TTL_SECONDS": "120", "IDEMPOTENCY_TTL_SECONDS": "30"}
    )
    store = GameStore.from_config(cfg)
    gid = new_id()
    store.create(gid, b"d")
    store.commit(gid, 1, b"d", idempotency=("k", b"f", b"r"))
    assert 110 < redis_client.ttl(key(gid, "state")) <= 120
    assert 20 < redis_client.ttl(key(gid, "idem")) <= 30


def test_idempotency_is_stored_with_the_commit(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"v1")
    assert store.commit(gid, 1, b"v2", [b"moved"], idempotency=("h", b"fp", b"answer")) == 2
    assert store.load_with_idempotency(gid, "h")[1] == (b"fp", b"answer")
    assert store.load_with_idempotency(gid, "h") == ((2, b"v2", None), (b"fp", b"answer"))
    assert store.load_with_idempotency(gid, "other") == ((2, b"v2", None), None)
    assert store.load_with_idempotency(new_id(), "h") == (None, None)
    # A retry: nothing is written, the first answer comes back (whatever the version).
    for version in (1, 2):
        with pytest.raises(IdempotentReplay) as info:
            store.commit(gid, version, b"again", [b"moved again"], idempotency=("h", b"x", b"y"))
        assert (info.value.fingerprint, info.value.response) == (b"fp", b"answer")
    assert store.load_game(gid) == (2, b"v2", None)
    assert store.events(gid, 0) == ([(1, b"moved")], 1)
    # Keys are per game.
    assert store.load_with_idempotency(new_id(), "h")[1] is None


def test_a_write_resent_after_a_lost_reply_is_recognised(store: GameStore) -> None:
    store._create = LostReply(store._create)
    store._commit = LostReply(store._commit)
    gid = new_id()
    assert store.create(gid, b"v1", [b"created"]) == 1
    assert store.commit(gid, 1, b"v2", [b"moved"], idempotency=("h", b"fp", b"answer")) == 2
    assert store.commit(gid, 2, b"v3", [b"moved again"]) == 3
    # Each write happened once, and answered as done (not as a conflict or a replay).
    assert store.load_game(gid) == (3, b"v3", None)
    assert store.events(gid, 0) == ([(1, b"created"), (2, b"moved"), (3, b"moved again")], 3)
    # Another write of the same version is still a conflict, another creation a clash.
    with pytest.raises(VersionConflict):
        store.commit(gid, 2, b"other")
    with pytest.raises(GameExists):
        store.create(gid, b"other")
    assert store.load_game(gid) == (3, b"v3", None)


def test_binary_payloads_round_trip(store: GameStore) -> None:
    gid = new_id()
    blob = bytes(range(256))
    store.create(gid, blob, [(blob, 3)])
    assert store.load_game(gid) == (1, blob, None)
    assert store.events(gid, 0, seat=3) == ([(1, blob)], 1)


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
        lambda: store.events("g", 0, wait_seconds=1),
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
        assert store.events("g", 0) == ([(1, b"e"), (2, b"e2")], 2)


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
    thread = _commit_later(other, gid, 1, [b"later"], 0.3)
    assert store.events(gid, 2, wait_seconds=5) == ([(3, b"later")], 3)
    thread.join()
    assert store.events(gid, 0, seat=0) == ([(1, b"e"), (2, b"private"), (3, b"later")], 3)
    store.commit(gid, 2, b"d3", idempotency=("k", b"f", b"r"))
    with pytest.raises(IdempotentReplay):
        store.commit(gid, 3, b"d4", idempotency=("k", b"f", b"r"))
    assert store.load_with_idempotency(gid, "k")[1] == (b"f", b"r")
    assert store.load_with_idempotency(gid, "k") == ((3, b"d3", None), (b"f", b"r"))


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
            assert store.commit(gid, 1, b"d2", [(b"p", 1)], idempotency=("k", b"f", b"r")) == 2
            assert store.load_game(gid) == (2, b"d2", None)
            assert store.events(gid, 0, seat=1) == ([(1, b"e"), (2, b"p")], 2)
            assert store.load_with_idempotency(gid, "k")[1] == (b"f", b"r")
            assert store.load_with_idempotency(gid, "k") == ((2, b"d2", None), (b"f", b"r"))
        thread = _commit_later(store, ids[0], 2, [b"later"], 0.3)
        assert store.events(ids[0], 2, wait_seconds=5) == ([(3, b"later")], 3)
        thread.join()
        client.close()


def test_write_ids_differ_between_forked_workers() -> None:
    """gunicorn forks its workers from a preloaded master: each must draw its own
    write ids, or two workers could take each other's write as their own."""
    from service.store.game_store import new_write_id

    new_write_id()  # the master has used its generator before forking
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(write, ",".join(new_write_id() for _ in range(3)).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 1000).decode().split(",")
    os.close(read)
    os.close(write)
    parent = [new_write_id() for _ in range(3)]
    assert len(child) == 3 and all(len(i) == 16 for i in child + parent)
    assert not set(child) & set(parent)


def test_a_game_keeps_a_bounded_number_of_idempotency_records(
    store: GameStore, redis_client: redis.Redis
) -> None:
    """A client sending a new key with every move once stored a 2 KB answer per move
    for a day.  A game now keeps its last IDEMPOTENCY_RECORDS_PER_GAME: the newest
    keys still replay, the oldest are forgotten, and the storage stays bounded."""
    from service.store.game_store import IDEMPOTENCY_RECORDS_PER_GAME as KEPT

    gid = new_id()
    store.create(gid, b"v1")
    answer = b"a" * 2000
    for version in range(1, 3 * KEPT + 1):
        store.commit(gid, version, b"d", idempotency=(f"key{version}", b"fp", answer))
    stored = sum(
        redis_client.memory_usage(k, samples=0) or 0  # every field, not a sample
        for k in redis_client.scan_iter(match=f"t13:{{{gid}}}:*")
        if k not in (key(gid, "state").encode(), key(gid, "events").encode())
    )
    assert stored < KEPT * len(answer) * 1.5, stored  # 192 keys stored: 3x that
    newest = [f"key{v}" for v in range(2 * KEPT + 1, 3 * KEPT + 1)]
    assert all(store.load_with_idempotency(gid, k)[1] == (b"fp", answer) for k in newest)
    assert store.load_with_idempotency(gid, "key1")[1] is None
    assert store.load_with_idempotency(gid, f"key{2 * KEPT}")[1] is None
