"""Every error Redis gives when it cannot serve is answered 503 ``STORE_UNAVAILABLE``
with ``Retry-After`` -- never 500 -- and logged as one WARNING line naming the
condition, never at ERROR nor with a traceback.  Each condition is produced for
real, on throwaway servers:

* ``READONLY``: the service pointed at a replica (a demoted primary answers so);
* ``NOREPLICAS``: a primary with ``min-replicas-to-write 1`` and no replica;
* ``MASTERDOWN``: a replica with ``replica-serve-stale-data no`` whose primary died.

(``LOADING`` is tests/store/test_loading.py; ``TRYAGAIN`` and ``CLUSTERDOWN``,
which only a cluster gives, tests/cluster/test_cluster_errors.py.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from harness.redis_replication import replicated, start_replica, wait_until
from harness.redis_server import RedisServer, redis_server_binary
from service.config import Config
from service.store import GameStore, StoreUnavailable, connect, failures
from tests.api.conftest import Game, create_game, make_app

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason="needs redis-server on PATH")

DRAW = {"type": "draw", "source": "stock"}


@pytest.fixture(autouse=True)
def _fresh_reports() -> Iterator[None]:
    failures.reset_reports()  # each test sees its conditions' first lines
    yield


def _writes(client: FlaskClient, game: Game, seat: int) -> dict[str, Callable[[], Any]]:
    """Writes that would succeed (``seat``'s turn: a draw) if Redis took them."""
    url = f"/v1/games/{game.id}"
    return {
        "new game": lambda: client.post("/v1/games", json={"players": [{"name": "x"}] * 2}),
        "move": lambda: client.post(f"{url}/moves", json=DRAW, headers=game.auth(seat)),
        "keyed move": lambda: client.post(
            f"{url}/moves", json=DRAW, headers={**game.auth(seat), "Idempotency-Key": "b2" * 16}
        ),
        "stream ticket": lambda: client.post(f"{url}/stream-tickets", headers=game.auth(0)),
    }


def _reads(client: FlaskClient, game: Game) -> dict[str, Callable[[], Any]]:
    url = f"/v1/games/{game.id}"
    return {
        "public view": lambda: client.get(url),
        "player view": lambda: client.get(f"{url}/view", headers=game.auth(0)),
        "events": lambda: client.get(f"{url}/events?after=0", headers=game.auth(0)),
    }


def _assert_unavailable(requests: dict[str, Callable[[], Any]]) -> None:
    for name, request in requests.items():
        answer = request()
        assert answer.status_code == 503, (name, answer.status_code, answer.get_data())
        assert answer.mimetype == "application/problem+json", name
        assert answer.get_json()["code"] == "STORE_UNAVAILABLE", name
        assert int(answer.headers["Retry-After"]) >= 1, name


def _assert_logged_as_expected(caplog: pytest.LogCaptureFixture, condition: str) -> None:
    """One WARNING line for ``condition`` (throttled), no ERROR, no traceback."""
    loud = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not loud, [(r.levelname, r.getMessage()) for r in loud]
    lines = [
        r
        for r in caplog.records
        if r.name == failures.__name__ and f"({condition})" in r.getMessage()
    ]
    assert len(lines) == 1, [r.getMessage() for r in caplog.records]
    assert lines[0].levelno == logging.WARNING and "\n" not in lines[0].getMessage()


@pytest.fixture(scope="module")
def primary_and_replica() -> Iterator[tuple[RedisServer, RedisServer, Game]]:
    """A primary holding a game, and its replica (in sync)."""
    with replicated(replicas=1) as group:
        client = make_app(group.primary.url).test_client()
        game = create_game(client, [{"name": "a"}, {"name": "b"}])
        replica = group.replicas[0]
        yield group.primary, replica, game


@pytest.mark.parametrize("fast_lane", ["true", "false"])
def test_readonly_a_replica_refuses_every_write_with_503(
    primary_and_replica: tuple[RedisServer, RedisServer, Game],
    fast_lane: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _primary, replica, made = primary_and_replica
    client = make_app(replica.url, FAST_LANE=fast_lane).test_client()
    game = Game(client, made.id, made.tokens)
    caplog.set_level(logging.WARNING)
    wait_until(lambda: client.get(f"/v1/games/{game.id}").status_code == 200, 10, "not replicated")
    _assert_unavailable(_writes(client, game, game.public()["round"]["turn"]))
    for name, request in _reads(client, game).items():  # a replica still serves reads
        assert request().status_code == 200, name
    _assert_logged_as_expected(caplog, "READONLY")


@pytest.mark.parametrize("fast_lane", ["true", "false"])
def test_noreplicas_a_primary_short_of_replicas_refuses_writes_with_503(
    fast_lane: str, caplog: pytest.LogCaptureFixture
) -> None:
    with RedisServer() as server:
        client = make_app(server.url, FAST_LANE=fast_lane).test_client()
        game = create_game(client, [{"name": "a"}, {"name": "b"}])
        seat = game.public()["round"]["turn"]
        admin = server.client()
        admin.config_set("min-replicas-to-write", 1)
        admin.close()
        caplog.set_level(logging.WARNING)
        _assert_unavailable(_writes(client, game, seat))
        for name, request in _reads(client, game).items():
            assert request().status_code == 200, name
        _assert_logged_as_expected(caplog, "NOREPLICAS")


@pytest.mark.parametrize("fast_lane", ["true", "false"])
def test_masterdown_a_replica_that_lost_its_primary_answers_503(
    fast_lane: str, caplog: pytest.LogCaptureFixture
) -> None:
    with RedisServer() as primary:
        game = create_game(make_app(primary.url).test_client(), [{"name": "a"}, {"name": "b"}])
        seat = game.public()["round"]["turn"]
        replica = start_replica(primary, ("--replica-serve-stale-data", "no"))
        try:
            primary.kill()
            wait_until(lambda: not _link_up(replica), 20, "the replica did not see its primary go")
            client = make_app(replica.url, FAST_LANE=fast_lane).test_client()
            caplog.set_level(logging.WARNING)
            game = Game(client, game.id, game.tokens)
            _assert_unavailable({**_reads(client, game), **_writes(client, game, seat)})
            assert client.get("/readyz").status_code == 503
            _assert_logged_as_expected(caplog, "MASTERDOWN")
        finally:
            replica.cleanup()


def _link_up(replica: RedisServer) -> bool:
    probe = replica.client()
    try:
        return probe.info("replication").get("master_link_status") == "up"
    finally:
        probe.close()


def test_every_store_write_raises_store_unavailable_on_a_replica(
    primary_and_replica: tuple[RedisServer, RedisServer, Game],
) -> None:
    _primary, replica, made = primary_and_replica
    config = Config.from_env({"REDIS_URL": replica.url})
    client = connect(config)
    store = GameStore(client, config=config)
    gid = made.id
    calls: dict[str, Callable[[], Any]] = {  # over the link, then through redis-py
        "commit": lambda: store.commit(gid, 1, b"doc", idempotency=("k" * 64, b"f", b"r")),
        "create": lambda: store.create("readonlytest", b"doc"),
        "issue_ticket": lambda: store.issue_ticket(gid, "ticket", 0, "holder", 60),
        "save_replay": lambda: store.save_replay(gid, b"{}"),
        "lobby put": lambda: store.lobby.put("waiting", gid, 1.0, "classic", 2, 2e9),
    }
    try:
        for name, call in calls.items():
            with pytest.raises(StoreUnavailable, match="READONLY"):
                call()
            assert name
    finally:
        client.close()


def test_an_unexpected_error_is_still_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with RedisServer() as server:
        config = Config.from_env({"REDIS_URL": server.url})
        store = GameStore(connect(config), config=config)
        admin = server.client()
        admin.set("t13:{wrongtype}:state", "a string, not a hash")
        admin.close()
        caplog.set_level(logging.WARNING)
        with pytest.raises(StoreUnavailable, match="WRONGTYPE"):
            store.load_game("wrongtype")
        assert [r.levelname for r in caplog.records if r.exc_info] == ["ERROR"]
