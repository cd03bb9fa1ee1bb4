"""Apps mode on a real Redis Cluster, two gunicorn instances: the operator's command
against the cluster, a game an app's backend creates played to its end by players
from two devices, every request to the other instance than the last, another app
refused, and a revocation honoured by both instances within a second."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.live_game import choose
from harness.redis_cluster import start_cluster
from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from tests.apps.test_two_instances import admin, bearer, refused_within

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason=INSTALL_HINT)


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[RedisServer]]:
    with start_cluster(3) as servers:
        yield servers


@pytest.fixture(scope="module")
def instances(cluster: list[RedisServer]) -> Iterator[list[GunicornServer]]:
    servers: list[GunicornServer] = []
    try:
        for node in cluster[:2]:
            env = {"REDIS_URL": node.url, "REDIS_CLUSTER": "true", "AUTH_MODE": "apps"}
            servers.append(GunicornServer(env))
            servers[-1].start()
        yield servers
    finally:
        for server in servers:
            server.cleanup()


def test_a_game_of_an_app_played_across_a_cluster(cluster, instances):
    url = cluster[2].url
    app = admin(url, "apps", "create", "cards", env={"REDIS_CLUSTER": "true"})
    other = admin(url, "apps", "create", "other", env={"REDIS_CLUSTER": "true"})
    bases = itertools.cycle([server.url for server in instances])

    def call(method: str, path: str, token: str, **kwargs: Any) -> requests.Response:
        return requests.request(
            method, next(bases) + path, headers=bearer(token), timeout=10, **kwargs
        )

    players = [{"name": "ann", "player_id": "u1"}, {"name": "bob", "player_id": "u2"}]
    body = {"players": players, "options": {"max_turns_per_round": 4}}
    created = call("POST", "/v1/games", app["key"], json=body).json()
    game = f"/v1/games/{created['id']}"
    devices = {
        seat: [
            call("POST", f"/v1/players/{pid}/tokens", app["key"], json={"name": pid}).json()[
                "token"
            ]
            for _ in range(2)
        ]
        for seat, pid in ((0, "u1"), (1, "u2"))
    }
    assert call("GET", game, other["key"]).status_code == 404
    for sent in range(1000):
        public = call("GET", game, app["key"]).json()
        if public["status"] == "finished":
            break
        seat = public["round"]["turn"]
        token = devices[seat][sent % 2]
        view = call("GET", game + "/view", token).json()
        moved = call("POST", game + "/moves", token, json=choose(view))
        assert moved.status_code == 200, moved.text
    assert public["status"] == "finished"
    for token in devices[0]:
        [mine] = call("GET", "/v1/me/games", token).json()["games"]
        assert (mine["id"], mine["seat"], mine["status"]) == (created["id"], 0, "finished")
    assert call("DELETE", "/v1/players/u2/tokens", app["key"]).json()["revoked"] == 2
    for server in instances:
        for token in devices[1]:
            assert refused_within(server.url + game + "/view", bearer(token), 1.0) < 1.0


def test_an_app_lists_and_aborts_its_games_across_a_cluster(cluster, instances):
    """The app's index is in another slot than its games: written after each game's
    write, read and checked against the games, each request to the other instance."""
    url = cluster[2].url
    app = admin(url, "apps", "create", "cards", env={"REDIS_CLUSTER": "true"})
    other = admin(url, "apps", "create", "other", env={"REDIS_CLUSTER": "true"})
    bases = itertools.cycle([server.url for server in instances])

    def call(method: str, path: str, token: str, **kwargs: Any) -> requests.Response:
        return requests.request(
            method, next(bases) + path, headers=bearer(token), timeout=10, **kwargs
        )

    made = []
    for i in range(5):
        players = [{"name": "ann", "player_id": "u1"}, {"name": f"p{i}", "player_id": f"p{i}"}]
        answer = call("POST", "/v1/games", app["key"], json={"players": players})
        assert answer.status_code == 201, answer.text
        made.append(answer.json()["id"])
    listed, cursor = [], None
    while True:
        query = {"limit": 2, **({} if cursor is None else {"cursor": cursor})}
        page = call("GET", "/v1/app/games", app["key"], params=query).json()
        listed += [game["id"] for game in page["games"]]
        cursor = page["next"]
        if cursor is None:
            break
    assert listed == made[::-1]
    assert call("GET", "/v1/app/games", other["key"]).json() == {"games": [], "next": None}

    aborted = call("POST", f"/v1/games/{made[1]}/abort", app["key"], json={"reason": "test"})
    assert aborted.status_code == 200, aborted.text
    only = call("GET", "/v1/app/games", app["key"], params={"status": "aborted"}).json()
    assert [game["id"] for game in only["games"]] == [made[1]]
    mine = call("GET", "/v1/app/games", app["key"], params={"player_id": "p3"}).json()
    assert [game["id"] for game in mine["games"]] == [made[3]]


def test_players_quick_join_by_skill_across_a_cluster(cluster, instances):
    """The skill-based seek's keys share its table's slot: players' quick-joins, each
    to the other instance, pair up exactly, and a retry with the same key (on the
    other instance) is answered the same seat."""
    url = cluster[2].url
    app = admin(url, "apps", "create", "cards", env={"REDIS_CLUSTER": "true"})
    set_ = admin(
        url, "apps", "matchmaking", app["id"], "--base", "1", env={"REDIS_CLUSTER": "true"}
    )
    assert set_["matchmaking"]["skill_base"] == 1.0
    bases = itertools.cycle([server.url for server in instances])

    def call(method: str, path: str, headers: dict[str, str], **kwargs: Any) -> requests.Response:
        return requests.request(method, next(bases) + path, headers=headers, timeout=10, **kwargs)

    seats: dict[tuple[str, int], str] = {}
    for i in range(6):
        pid = f"p{i}"
        minted = call("POST", f"/v1/players/{pid}/tokens", bearer(app["key"]), json={"name": pid})
        headers = {**bearer(minted.json()["token"]), "Idempotency-Key": str(uuid.uuid4())}
        body = {"name": pid, "seats": 2}
        first = call("POST", "/v1/lobby/quick-join", headers, json=body)
        assert first.status_code == 201, first.text
        again = call("POST", "/v1/lobby/quick-join", headers, json=body)
        assert again.status_code == 201 and again.json() == first.json()
        seats[(first.json()["id"], first.json()["seat"])] = pid
    games = {game for game, _seat in seats}
    assert len(seats) == 6 and len(games) == 3, "three games of two, every seat once"
