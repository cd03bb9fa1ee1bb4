"""The API on a real Redis Cluster, served by two gunicorn instances at once.

Three masters on free loopback ports (:func:`harness.redis_cluster.start_cluster`),
two gunicorn instances (1 and 2 workers) with ``REDIS_CLUSTER=true``, and whole
games played with every request going to the other instance than the last.
Every game's keys must live in one slot, and both instances must agree on the
finished game.  Everything started here is stopped by PID, also on failure.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from redis.cluster import RedisCluster

from harness.gunicorn_server import GunicornServer
from harness.live_game import choose
from harness.redis_cluster import start_cluster
from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from service.config import Config
from service.store import GameStore, TooManyStreams
from service.store.keys import address_streams_key, seat_streams_key
from service.store.stream_leases import address_holder, seat_holder

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason=INSTALL_HINT)

GAMES = [
    (2, "classic", {"max_turns_per_round": 8}, "cluster-a"),
    (3, "classic", {"max_turns_per_round": 6}, "cluster-b"),
    (2, "finnish", {"max_turns_per_round": 6}, None),
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[RedisServer]]:
    with start_cluster(3) as servers:
        yield servers


@pytest.fixture(scope="module")
def cluster_client(cluster: list[RedisServer]) -> Iterator[RedisCluster]:
    client = RedisCluster.from_url(cluster[0].url, socket_timeout=5)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="module")
def instances(cluster: list[RedisServer]) -> Iterator[list[GunicornServer]]:
    servers: list[GunicornServer] = []
    try:
        for workers, node in ((1, cluster[0]), (2, cluster[1])):
            server = GunicornServer(
                {
                    "REDIS_URL": node.url,
                    "REDIS_CLUSTER": "true",
                    "WEB_CONCURRENCY": str(workers),
                }
            )
            servers.append(server)
            server.start()
        yield servers
    finally:
        for server in servers:
            server.cleanup()


class Client:
    """Sends every request to the next instance in turn (round robin over two)."""

    def __init__(self, instances: list[GunicornServer]) -> None:
        self.sessions = [(requests.Session(), server.url) for server in instances]
        self._next = itertools.cycle(range(len(self.sessions)))
        self.requests = 0

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        session, base = self.sessions[next(self._next)]
        self.requests += 1
        kwargs.setdefault("timeout", 10)
        return session.request(method, base + path, **kwargs)

    def close(self) -> None:
        for session, _ in self.sessions:
            session.close()


def play(client: Client, players: int, ruleset: str, options: dict[str, Any], seed: Any) -> str:
    body: dict[str, Any] = {
        "players": [{"name": f"p{i}"} for i in range(players)],
        "ruleset": ruleset,
        "options": options,
    }
    if seed is not None:
        body["seed"] = seed
    created = client.call("POST", "/v1/games", json=body)
    assert created.status_code == 201, created.text
    game_id = created.json()["id"]
    tokens = {p["seat"]: p["token"] for p in created.json()["players"]}
    auth = {seat: {"Authorization": f"Bearer {token}"} for seat, token in tokens.items()}
    view: dict[str, Any] | None = None
    for number in range(5000):
        if view is None:
            public = client.call("GET", f"/v1/games/{game_id}").json()
            if public["status"] == "finished":
                return game_id
            seat = public["round"]["turn"]
            response = client.call("GET", f"/v1/games/{game_id}/view", headers=auth[seat])
            assert response.status_code == 200, response.text
            view = response.json()
        seat = view["seat"]
        headers = {**auth[seat], "Idempotency-Key": f"{game_id}-{number}"}
        response = client.call(
            "POST", f"/v1/games/{game_id}/moves", json=choose(view), headers=headers
        )
        assert response.status_code == 200, response.text
        view = response.json()
        still_mine = (
            view["status"] == "playing"
            and view.get("round") is not None
            and view["round"]["turn"] == seat
        )
        if not still_mine:
            view = None
    raise AssertionError(f"game {game_id} did not finish")


def test_games_on_cluster_served_by_two_instances(
    instances: list[GunicornServer], cluster_client: RedisCluster
):
    started = time.monotonic()
    client = Client(instances)
    try:
        game_ids = [play(client, *game) for game in GAMES]
        for game_id in game_ids:
            answers = [
                session.get(f"{base}/v1/games/{game_id}", timeout=10)
                for session, base in client.sessions
            ]
            assert all(a.status_code == 200 for a in answers)
            assert answers[0].json() == answers[1].json()
            public = answers[0].json()
            assert public["status"] == "finished"
            assert public["winners"]
            assert len(public["results"]) >= 11  # every round was played
            events = [
                session.get(f"{base}/v1/games/{game_id}/events", timeout=10).json()
                for session, base in client.sessions
            ]
            assert events[0] == events[1]
            assert events[0]["events"] and events[0]["last_seq"] == events[0]["events"][-1]["seq"]
            assert_one_slot(cluster_client, game_id)
    finally:
        client.close()
    assert time.monotonic() - started < 60, f"{client.requests} requests took too long"


def assert_one_slot(cluster_client: RedisCluster, game_id: str) -> None:
    """Every key of the game (state, events, idempotency records) is in the same slot."""
    state, events = f"t13:{{{game_id}}}:state", f"t13:{{{game_id}}}:events"
    assert cluster_client.exists(state, events) == 2
    slot = cluster_client.execute_command("CLUSTER KEYSLOT", state)
    assert cluster_client.execute_command("CLUSTER KEYSLOT", events) == slot
    found: dict[bytes, str] = {}
    for node in cluster_client.get_primaries():
        node_client = cluster_client.get_redis_connection(node)
        for key in node_client.scan_iter(match=f"t13:{{{game_id}}}:*", count=1000):
            found[key] = node.name
    assert len(found) > 2  # state, events and the moves' idempotency records
    assert {cluster_client.execute_command("CLUSTER KEYSLOT", key) for key in found} == {slot}
    assert len(set(found.values())) == 1  # hence on one node


def test_long_poll_on_cluster_across_instances(instances: list[GunicornServer]):
    """A long poll on one instance (XREAD BLOCK on a cluster node) sees a move made on the other."""
    first, second = (server.url for server in instances)
    created = requests.post(
        first + "/v1/games", json={"players": [{"name": "a"}, {"name": "b"}]}, timeout=10
    )
    assert created.status_code == 201, created.text
    game_id = created.json()["id"]
    tokens = {p["seat"]: p["token"] for p in created.json()["players"]}
    last = requests.get(f"{second}/v1/games/{game_id}/events", timeout=10).json()["last_seq"]
    result: dict[str, Any] = {}

    def poll() -> None:
        started = time.monotonic()
        result["response"] = requests.get(
            f"{first}/v1/games/{game_id}/events", params={"after": last, "wait": 20}, timeout=30
        )
        result["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    time.sleep(0.5)
    public = requests.get(f"{second}/v1/games/{game_id}", timeout=10).json()
    seat = public["round"]["turn"]
    moved = requests.post(
        f"{second}/v1/games/{game_id}/moves",
        json={"type": "draw", "source": "stock"},
        headers={"Authorization": f"Bearer {tokens[seat]}"},
        timeout=10,
    )
    assert moved.status_code == 200, moved.text
    thread.join(25)
    response = result["response"]
    assert response.status_code == 200
    body = response.json()
    assert body["events"] and body["last_seq"] > last
    assert result["seconds"] < 10


def test_unreachable_cluster_is_unavailable():
    """A cluster URL nobody listens on is StoreUnavailable (503), never a redis-py error."""
    from service.config import Config
    from service.store import GameStore, StoreUnavailable

    dead = RedisServer()  # never started: a free port with nothing on it
    try:
        store = GameStore.from_config(
            Config.from_env({"REDIS_URL": dead.url, "REDIS_CLUSTER": "true"})
        )
        with pytest.raises(StoreUnavailable):
            store.load_game("g1")
        assert store.ping() is False
    finally:
        dead.cleanup()


def test_stream_leases_on_cluster(cluster: list[RedisServer], cluster_client: RedisCluster):
    """A stream's leases on its address and its seat live in different slots: each is
    taken by a script of its own, and both are given back in one call."""
    config = Config.from_env({"REDIS_URL": cluster[0].url, "REDIS_CLUSTER": "true"})
    store = GameStore(config=config)
    game, address = f"g{secrets.token_hex(8)}", f"192.0.2.{secrets.randbelow(250)}"
    keys = [address_streams_key(address), seat_streams_key(game, 0)]
    assert cluster_client.keyslot(keys[0]) != cluster_client.keyslot(keys[1])
    holders = [address_holder(address, 3), seat_holder(game, 0, 1)]
    lease = store.streams.take(holders, 30)
    with pytest.raises(TooManyStreams) as refused:
        store.streams.take(holders, 30)
    assert refused.value.holder == "seat"
    assert [cluster_client.zcard(key) for key in keys] == [1, 1]  # the refused one gave back
    store.streams.renew(keys, lease.id, 60)  # what a heartbeat past half its life sends
    assert all(cluster_client.pttl(key) > 30_000 for key in keys)
    lease.release()
    assert not any(cluster_client.exists(key) for key in keys)
    store.streams.take(holders, 30).release()
