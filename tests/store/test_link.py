"""The store's hot path to Redis (service.store.link) against a real redis-server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import fakeredis
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from harness.redis_server import RedisServer
from service.config import Config
from service.store import GameStore, connect, key
from service.store import link as link_module
from service.store.budget import close_budget, open_budget
from service.store.link import Link, link_for


@pytest.fixture
def link(config: Config, redis_client: redis.Redis) -> Iterator[Link]:
    client = connect(config)
    found = link_for(client)
    assert found is not None
    try:
        yield found
    finally:
        client.close()


def connection_id(link: Link) -> int:
    [client_id] = link.execute(("CLIENT", "ID"))
    return int(client_id)


def test_only_a_plain_client_gets_a_link(config: Config) -> None:
    client = connect(config)
    try:
        assert isinstance(link_for(client), Link)
    finally:
        client.close()
    assert link_for(fakeredis.FakeRedis()) is None


def test_commands_of_one_call_share_a_round_trip(link: Link, redis_client: redis.Redis) -> None:
    redis_client.hset("t13:{g}:state", mapping={"v": 3, "d": b"doc"})
    assert link.execute(("HMGET", "t13:{g}:state", "v", "d"), ("HMGET", "t13:{g}:idem", "x:f")) == [
        [b"3", b"doc"],
        [None],
    ]


def test_sequential_calls_reuse_a_connection_and_concurrent_ones_do_not(link: Link) -> None:
    mine = connection_id(link)
    assert connection_id(link) == mine
    inside: list[int] = []

    def nested() -> None:  # a second call while the first holds its connection
        inside.append(connection_id(link))

    outer = link._take()
    try:
        nested()
    finally:
        link._give_back(outer)
    assert inside and inside[0] != mine


def test_a_link_holds_at_most_its_pools_connections(redis_url: str) -> None:
    """A call finding every connection busy waits for one, within its budget, then fails."""
    client = connect(Config.from_env({"REDIS_URL": redis_url, "REDIS_MAX_CONNECTIONS": "2"}))
    found = link_for(client)
    assert found is not None
    ids: list[int] = []
    blocked = ("BLPOP", "t13:test:empty", "0.5")  # holds its connection for 0.5 s
    sleepers = [threading.Thread(target=lambda: found.execute(blocked)) for _ in "ab"]
    for sleeper in sleepers:
        sleeper.start()
    time.sleep(0.1)
    token = open_budget(0.2)
    try:
        started = time.monotonic()
        with pytest.raises(redis.ConnectionError, match="all 2 connections to Redis are busy"):
            found.execute(("PING",))
        assert 0.15 < time.monotonic() - started < 0.4
    finally:
        close_budget(token)
    ids.append(connection_id(found))  # unbudgeted: it waits for one to come back
    for sleeper in sleepers:
        sleeper.join()
    ids += [connection_id(found) for _ in range(3)]
    assert len(set(ids)) <= 2
    client.close()


def test_a_thread_per_request_server_does_not_pile_up_connections(
    link: Link, redis_client: redis.Redis
) -> None:
    before = len(redis_client.client_list())
    for _ in range(50):  # werkzeug's dev server: a new thread for every request
        worker = threading.Thread(target=lambda: link.execute(("PING",)))
        worker.start()
        worker.join()
    assert len(redis_client.client_list()) - before <= 1


def test_a_forked_child_takes_a_connection_of_its_own(
    link: Link, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = connection_id(link)
    monkeypatch.setattr(link_module.os, "getpid", lambda: -1)  # as in a child after fork
    child = connection_id(link)
    assert child != parent
    assert connection_id(link) == child


def test_a_dropped_connection_is_replaced_and_the_command_retried(
    link: Link, redis_client: redis.Redis
) -> None:
    redis_client.set("t13:k", b"v")
    first = connection_id(link)
    assert redis_client.client_kill_filter(_id=str(first)) == 1
    assert link.execute(("GET", "t13:k")) == [b"v"]
    assert connection_id(link) != first


def test_an_error_reply_raises_after_every_reply_is_read(
    link: Link, redis_client: redis.Redis
) -> None:
    redis_client.set("t13:string", b"x")
    redis_client.set("t13:k", b"v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        link.execute(("HMGET", "t13:string", "v"), ("GET", "t13:k"))
    # the second reply was consumed: the connection answers the next call in step
    assert link.execute(("GET", "t13:k"), ("GET", "t13:string")) == [b"v", b"x"]


def test_a_script_unknown_to_redis_is_loaded_and_run(
    config: Config, redis_client: redis.Redis, _redis_target: object
) -> None:
    if not getattr(_redis_target, "owned", False):
        pytest.skip("SCRIPT FLUSH only on the suite's own redis-server")
    client = connect(config)
    try:
        store = GameStore(client, config=config)
        store.create("g1", b"doc")
        redis_client.script_flush()
        assert store.commit("g1", 1, b"doc2") == 2
        assert redis_client.hget(key("g1", "state"), "v") == b"2"
    finally:
        client.close()


def test_error_replies_are_redis_py_exceptions(link: Link) -> None:
    # EVALSHA of a script Redis does not know: the store relies on this type
    with pytest.raises(redis.exceptions.NoScriptError):
        link.execute(("EVALSHA", "0" * 40, 0))
    assert link.execute(("PING",)) == [b"PONG"]


def test_a_connection_idle_past_the_health_check_interval_is_pinged_first(
    link: Link, monkeypatch: pytest.MonkeyPatch
) -> None:
    link.execute(("PING",))
    [wire] = link._idle
    pings: list[object] = []
    monkeypatch.setattr(wire.conn, "check_health", lambda: pings.append(wire.conn))
    link.execute(("PING",))
    assert pings == []  # used just now
    wire.used -= wire.conn.health_check_interval + 1
    link.execute(("PING",))
    assert pings == [wire.conn]


def test_a_large_reply_arrives_whole(link: Link, redis_client: redis.Redis) -> None:
    big = bytes(range(256)) * 1024  # 256 KiB: several reads
    redis_client.hset("t13:{big}:state", mapping={"v": 1, "d": big})
    assert link.execute(("HMGET", "t13:{big}:state", "v", "d"), ("PING",)) == [
        [b"1", big],
        b"PONG",
    ]


def test_a_unix_socket_connection_works_too() -> None:
    server = RedisServer()
    sock = server.dir / "redis.sock"
    server.extra_args = ("--unixsocket", str(sock), "--unixsocketperm", "700")
    server.start()
    try:
        client = redis.Redis(unix_socket_path=str(sock), socket_timeout=2)
        found = link_for(client)
        assert found is not None
        client.hset("t13:{u}:state", mapping={"v": 3, "d": b"doc"})
        assert found.execute(("HMGET", "t13:{u}:state", "v", "d")) == [[b"3", b"doc"]]
        [first] = found.execute(("CLIENT", "ID"))
        assert client.client_kill_filter(_id=str(first)) == 1
        assert found.execute(("PING",)) == [b"PONG"]  # reconnected over the socket
        client.close()
    finally:
        server.stop()


def test_a_timeout_raises_redis_py_timeout_error_and_the_next_call_works() -> None:
    server = RedisServer().start()  # its own server: CLIENT PAUSE stops every client
    try:
        client = server.client(socket_timeout=0.2, retry=Retry(NoBackoff(), 0))
        found = link_for(client)
        assert found is not None
        assert found.execute(("PING",)) == [b"PONG"]
        server.client().client_pause(600)
        with pytest.raises(redis.TimeoutError):
            found.execute(("GET", "t13:k"))
        time.sleep(0.6)
        assert found.execute(("PING",)) == [b"PONG"]  # on a new connection, in step
        client.close()
    finally:
        server.stop()
