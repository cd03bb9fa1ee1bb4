"""``REDIS_WAIT_REPLICAS`` / ``REDIS_WAIT_AOF``: a change is acknowledged only once
Redis confirms it will last, else answered 503 with its fate, and a retry with
the same ``Idempotency-Key`` is always safe.  On throwaway primaries and
replicas; a replica is stalled with SIGSTOP to hold replication back.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from harness.live_game import choose
from harness.redis_replication import Replicated, replicated
from harness.redis_server import RedisServer, redis_server_binary
from service.config import Config
from service.store import GameStore, StoreMisconfigured, connect, key
from tests.api.conftest import Game, create_game, make_app

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason="needs redis-server on PATH")

ROOT = Path(__file__).resolve().parents[2]
WAIT = {"REDIS_WAIT_REPLICAS": "1", "REDIS_WAIT_TIMEOUT_MS": "300"}


@pytest.fixture
def group() -> Iterator[Replicated]:
    with replicated(replicas=1) as found:
        yield found


def _version_on(server: RedisServer, game_id: str) -> int | None:
    client = server.client()
    try:
        found = client.hget(key(game_id, "state"), "v")
    finally:
        client.close()
    return None if found is None else int(found)


def _next_move(game: Game) -> tuple[int, dict[str, Any]]:
    seat = game.public()["round"]["turn"]
    return seat, choose(game.view(seat))


def _keyed_move(game: Game, seat: int, move: dict[str, Any], key_: str) -> Any:
    return game.client.post(
        f"/v1/games/{game.id}/moves",
        json=move,
        headers={**game.auth(seat), "Idempotency-Key": key_},
    )


def test_each_acknowledged_change_is_on_the_replica_already(group: Replicated) -> None:
    client = make_app(group.primary.url, **WAIT).test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}])
    replica = group.replicas[0]
    assert _version_on(replica, game.id) == 1
    for number in range(8):
        seat, move = _next_move(game)
        answer = _keyed_move(game, seat, move, f"{game.id}-{number}")
        assert answer.status_code == 200, answer.get_json()
        assert _version_on(replica, game.id) == answer.get_json()["version"]
    ticket = client.post(f"/v1/games/{game.id}/stream-tickets", headers=game.auth(0))
    assert ticket.status_code == 201, ticket.get_json()
    reader = replica.client()
    try:
        assert reader.keys(key(game.id, "ticket:*"))
    finally:
        reader.close()


def _assert_unconfirmed(answer: Any) -> None:
    assert answer.status_code == 503, (answer.status_code, answer.get_data())
    problem = answer.get_json()
    assert problem["code"] == "STORE_UNAVAILABLE"
    assert "may or may not persist" in problem["detail"]
    assert "same Idempotency-Key" in problem["detail"]
    assert int(answer.headers["Retry-After"]) >= 1


def test_an_unconfirmed_change_is_503_and_its_retry_answers_once_confirmed(
    group: Replicated,
) -> None:
    client = make_app(group.primary.url, **WAIT).test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}])
    seat, move = _next_move(game)
    before = game.public()["version"]
    replica = group.replicas[0]
    replica.pause()
    try:
        _assert_unconfirmed(_keyed_move(game, seat, move, "k" * 32))
        assert _version_on(group.primary, game.id) == before + 1  # made on the primary
        # the retry finds the change, but may not say so before it is confirmed:
        # here, and at another instance (other connections, which wrote nothing)
        _assert_unconfirmed(_keyed_move(game, seat, move, "k" * 32))
        other = make_app(group.primary.url, **WAIT).test_client()
        _assert_unconfirmed(_keyed_move(Game(other, game.id, game.tokens), seat, move, "k" * 32))
        # a new game is not acknowledged either
        created = client.post("/v1/games", json={"players": [{"name": "x"}] * 2})
        _assert_unconfirmed(created)
    finally:
        replica.resume()
    retry = _keyed_move(game, seat, move, "k" * 32)
    assert retry.status_code == 200, retry.get_json()
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.get_json()["version"] == before + 1
    assert game.public()["version"] == before + 1  # made once


def test_a_failover_loses_no_acknowledged_move(group: Replicated) -> None:
    """The replica falls behind (stalled and disconnected), the primary dies, the replica is
    promoted (``REPLICAOF NO ONE``): every move that was answered 200 is in the
    game, and the one answered 503 meanwhile is made by its retry, once."""
    client = make_app(group.primary.url, **WAIT).test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}])
    acknowledged: list[tuple[int, dict[str, Any], str, int]] = []
    for number in range(6):
        seat, move = _next_move(game)
        answer = _keyed_move(game, seat, move, f"{game.id}-{number}")
        assert answer.status_code == 200, answer.get_json()
        acknowledged.append((seat, move, f"{game.id}-{number}", answer.get_json()["version"]))
    replica = group.replicas[0]
    replica.pause()  # stalled, and cut off: what the primary takes now is on it alone
    admin = group.primary.client()
    try:
        admin.client_kill_filter(_type="replica")
    finally:
        admin.close()
    try:
        lost_seat, lost_move = _next_move(game)
        lost_key = f"{game.id}-lost"
        answer = _keyed_move(game, lost_seat, lost_move, lost_key)
        if answer.status_code == 200:  # acknowledged: it must survive what follows
            acknowledged.append((lost_seat, lost_move, lost_key, answer.get_json()["version"]))
        else:
            _assert_unconfirmed(answer)
        group.primary.kill()
    finally:
        replica.resume()
    promoted = replica.client()
    try:
        promoted.execute_command("REPLICAOF", "NO", "ONE")
    finally:
        promoted.close()
    after = make_app(replica.url, **{**WAIT, "REDIS_WAIT_REPLICAS": "0"}).test_client()
    moved = Game(after, game.id, game.tokens)
    assert moved.public()["version"] >= acknowledged[-1][3]
    for seat, move, key_, version in acknowledged:  # each is there, as answered
        again = _keyed_move(moved, seat, move, key_)
        assert again.status_code == 200, (key_, again.get_json())
        assert again.headers.get("Idempotent-Replayed") == "true", key_
        assert again.get_json()["version"] == version
    if answer.status_code == 503:  # lost with the old primary: its retry makes it, once
        retry = _keyed_move(moved, lost_seat, lost_move, lost_key)
        assert retry.status_code == 200, retry.get_json()
        assert retry.headers.get("Idempotent-Replayed") is None
        again = _keyed_move(moved, lost_seat, lost_move, lost_key)
        assert again.headers["Idempotent-Replayed"] == "true"


def test_wait_aof_on_a_redis_without_waitaof_refuses_to_start() -> None:
    with RedisServer(extra_args=("--appendonly", "yes")) as server:
        version = server.client().info("server")["redis_version"]
        if tuple(int(p) for p in version.split(".")[:2]) >= (7, 2):
            pytest.skip(f"redis-server {version} has WAITAOF")
        with pytest.raises(StoreMisconfigured, match="7.2"):
            make_app(server.url, REDIS_WAIT_AOF="true")
        # as gunicorn's worker does: importing the app fails, saying why
        env = {**os.environ, "REDIS_URL": server.url, "REDIS_WAIT_AOF": "true"}
        boot = subprocess.run(
            [sys.executable, "-c", "import service.wsgi"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert boot.returncode != 0
        assert "REDIS_WAIT_AOF needs WAITAOF" in boot.stderr


def test_wait_replicas_with_too_few_replicas_warns_at_startup(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with RedisServer() as server:
        client: FlaskClient = make_app(server.url, **WAIT).test_client()
        assert any("REDIS_WAIT_REPLICAS=1" in r.getMessage() for r in caplog.records)
        answer = client.post("/v1/games", json={"players": [{"name": "x"}] * 2})
        _assert_unconfirmed(answer)


NEWER_REDIS = os.environ.get("T13_REDIS_7_2_SERVER") or shutil.which("valkey-server")
"""A redis-server >= 7.2 (or Valkey) binary, for WAITAOF: Debian 12 ships 7.0."""


@pytest.mark.skipif(
    NEWER_REDIS is None,
    reason="WAITAOF needs Redis >= 7.2: set T13_REDIS_7_2_SERVER to such a redis-server",
)
def test_wait_aof_confirms_each_change_on_redis_7_2() -> None:
    assert NEWER_REDIS is not None
    appendonly = ("--appendonly", "yes", "--appendfsync", "everysec")
    with RedisServer(extra_args=appendonly, binary=NEWER_REDIS) as server:
        config = Config.from_env({"REDIS_URL": server.url, "REDIS_WAIT_AOF": "true"})
        store = GameStore(connect(config), config=config)
        assert store.check_durability() == []
        client = make_app(server.url, REDIS_WAIT_AOF="true").test_client()
        game = create_game(client, [{"name": "a"}, {"name": "b"}])
        for number in range(4):
            seat, move = _next_move(game)
            assert _keyed_move(game, seat, move, f"aof-{number}").status_code == 200
    with RedisServer(binary=NEWER_REDIS) as server:  # appendonly no: nothing to wait for
        with pytest.raises(StoreMisconfigured, match="appendonly"):
            make_app(server.url, REDIS_WAIT_AOF="true")


def test_a_quick_join_that_made_its_game_unconfirmed_is_answered_its_seat_on_retry(
    group: Replicated,
) -> None:
    """A keyed quick-join that lists and makes a new game while the replica is
    stalled is 503; another client then quick-joins the same table: the retry
    with the key is the first answer replayed (its seat, ``created``), and the
    game holds the two players once each."""
    client = make_app(group.primary.url, **WAIT).test_client()
    asked = {"name": "first", "seats": 6}
    key_ = secrets.token_hex(16)
    replica = group.replicas[0]
    replica.pause()
    try:
        first = client.post("/v1/lobby/quick-join", json=asked, headers={"Idempotency-Key": key_})
        _assert_unconfirmed(first)
    finally:
        replica.resume()
    other = client.post("/v1/lobby/quick-join", json={"name": "other", "seats": 6})
    assert other.status_code == 201, other.get_json()
    retry = client.post("/v1/lobby/quick-join", json=asked, headers={"Idempotency-Key": key_})
    assert retry.status_code == 201, retry.get_json()
    assert retry.headers.get("Idempotent-Replayed") == "true"
    body = retry.get_json()
    assert body["id"] == other.get_json()["id"] and body["created"]
    assert {body["seat"], other.get_json()["seat"]} == {0, 1}
    players = client.get(f"/v1/games/{body['id']}").get_json()["players"]
    assert [p["name"] for p in players if p["name"] is not None] == ["first", "other"]
    token = {"Authorization": f"Bearer {body['token']}"}
    assert client.get(f"/v1/games/{body['id']}/view", headers=token).status_code == 200
