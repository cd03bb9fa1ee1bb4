"""The errors only a Redis Cluster gives, produced for real, are answered 503
``STORE_UNAVAILABLE`` with ``Retry-After`` -- never 500 -- and logged as one
WARNING line, never at ERROR nor with a traceback:

* ``TRYAGAIN``: a game's slot being moved to another node, one of its keys
  moved already: a write touching all of them (its script) cannot run on either
  node until the move ends;
* ``CLUSTERDOWN``: a slot no node serves (``CLUSTER DELSLOTS``) with
  ``cluster-require-full-coverage yes`` (the default): the node answers
  ``CLUSTERDOWN`` to everything.

Each runs on a cluster of its own (three masters with a replica each, on free
ports, stopped by PID), with and without ``REDIS_WAIT_REPLICAS`` (whose writes
go to the slot's node straight, outside redis-py's cluster retries).  The first
test shows that path at work: with ``REDIS_WAIT_REPLICAS=1`` each acknowledged
change is on the replica of its slot's node already.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from harness.live_game import choose
from harness.redis_cluster import start_cluster
from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from service.store import failures, key
from service.store.keys import slot_of
from tests.api.conftest import Game, create_game, make_app

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason=INSTALL_HINT)

DRAW = {"type": "draw", "source": "stock"}


MASTERS = 3


@pytest.fixture
def cluster() -> Iterator[list[RedisServer]]:
    with start_cluster(MASTERS, replicas=1) as servers:
        yield servers


def test_with_wait_each_acknowledged_change_is_on_the_replica_of_its_node(
    cluster: list[RedisServer],
) -> None:
    client, game, seat = _app_game(cluster, REDIS_WAIT_REPLICAS="1")
    owner, _id = _owner(cluster, slot_of(game.id))
    replica = cluster[MASTERS + cluster.index(owner)]  # the replicas follow in order
    reader = replica.client()
    try:
        reader.execute_command("READONLY")  # a cluster replica serves its slots' reads
        for _ in range(6):
            view = game.view(seat)
            seat = view["seat"]
            move = client.post(
                f"/v1/games/{game.id}/moves", json=choose(view), headers=game.auth(seat)
            )
            assert move.status_code == 200, move.get_json()
            version = move.get_json()["version"]
            assert int(reader.hget(key(game.id, "state"), "v")) == version
            seat = game.public()["round"]["turn"]
    finally:
        reader.close()


def _owner(servers: list[RedisServer], slot: int) -> tuple[RedisServer, str]:
    """The node serving ``slot``, and its node id."""
    for server in servers:
        client = server.client(decode_responses=True)
        try:
            for start, end, (_host, port, node_id, *_rest), *_replicas in client.execute_command(
                "CLUSTER SLOTS"
            ):
                if start <= slot <= end and int(port) == server.port:
                    return server, str(node_id)
        finally:
            client.close()
    raise AssertionError(f"no node serves slot {slot}")


def _node_id(server: RedisServer) -> str:
    client = server.client(decode_responses=True)
    try:
        return str(client.execute_command("CLUSTER MYID"))
    finally:
        client.close()


def _app_game(servers: list[RedisServer], **env: str) -> tuple[Any, Game, int]:
    client = make_app(servers[0].url, REDIS_CLUSTER="true", **env).test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}])
    return client, game, game.public()["round"]["turn"]


def _assert_503(answer: Any) -> None:
    assert answer.status_code == 503, (answer.status_code, answer.get_data())
    assert answer.get_json()["code"] == "STORE_UNAVAILABLE"
    assert int(answer.headers["Retry-After"]) >= 1


def _assert_quiet(caplog: pytest.LogCaptureFixture) -> None:
    loud = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not loud, [(r.levelname, r.getMessage()) for r in loud]
    lines = [r for r in caplog.records if r.name == failures.__name__]
    assert lines and all(r.levelno == logging.WARNING for r in lines)
    assert all("\n" not in r.getMessage() for r in lines)


@pytest.mark.parametrize("wait", ["0", "1"])
def test_tryagain_a_write_while_its_slot_moves_answers_503(
    cluster: list[RedisServer], wait: str, caplog: pytest.LogCaptureFixture
) -> None:
    failures.reset_reports()
    client, game, seat = _app_game(cluster, REDIS_WAIT_REPLICAS=wait)
    slot = slot_of(game.id)
    source, source_id = _owner(cluster, slot)
    target = next(server for server in cluster[:MASTERS] if server is not source)
    admin_source, admin_target = source.client(), target.client()
    try:
        admin_target.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", source_id)
        admin_source.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", _node_id(target))
        admin_source.execute_command(
            "MIGRATE", "127.0.0.1", target.port, key(game.id, "state"), 0, 5000
        )
        caplog.set_level(logging.WARNING)
        assert game.public()["id"] == game.id  # a read of one key follows the move (ASK)
        move = client.post(f"/v1/games/{game.id}/moves", json=DRAW, headers=game.auth(seat))
        _assert_503(move)
        _assert_quiet(caplog)
        with pytest.raises(redis.exceptions.TryAgainError):  # what Redis said
            admin_source.eval(
                "return redis.call('HGET', KEYS[1], 'v')",
                2,
                key(game.id, "state"),
                key(game.id, "events"),
            )
    finally:
        admin_source.close()
        admin_target.close()


def test_clusterdown_a_slot_nobody_serves_answers_503(
    cluster: list[RedisServer], caplog: pytest.LogCaptureFixture
) -> None:
    failures.reset_reports()
    client, game, seat = _app_game(cluster)
    slot = slot_of(game.id)
    owner, _owner_id = _owner(cluster, slot)
    admin = owner.client()
    try:
        admin.execute_command("CLUSTER DELSLOTS", slot)
        with pytest.raises(redis.exceptions.ClusterDownError):  # what Redis says now
            admin.hget(key(game.id, "state"), "v")
        caplog.set_level(logging.WARNING)
        url = f"/v1/games/{game.id}"
        _assert_503(client.post(f"{url}/moves", json=DRAW, headers=game.auth(seat)))
        _assert_503(client.get(url))
        _assert_quiet(caplog)
    finally:
        admin.close()
