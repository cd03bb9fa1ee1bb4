"""Per-app limits hold exactly across two gunicorn instances sharing one Redis, and
a Redis Cluster: requests sent at once to both instances, the operator's limits set
with the real command line; exactly the limit's number pass, the others are 429
with Retry-After on either instance, and a game that ends frees its place at once."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.redis_cluster import start_cluster
from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from tests.apps.test_two_instances import admin, bearer

LIMITED = {"AUTH_MODE": "apps", "RATE_LIMITS": "true", "RATE_LIMIT_CREATE": "1/minute"}
"""Rate limits on; an address's creates limit far below the app's (which replaces it)."""


def waiting_game(base: str, key: str, player_id: str) -> requests.Response:
    body = {"players": [{"name": player_id, "player_id": player_id}], "seats": 2}
    return requests.post(base + "/v1/games", json=body, headers=bearer(key), timeout=30)


def at_once(bases: list[str], key: str, n: int, first: int = 0) -> list[requests.Response]:
    """``n`` creates sent together, to both instances in turn."""
    urls = itertools.cycle(bases)
    jobs = [(next(urls), f"u{first + i}") for i in range(n)]
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda job: waiting_game(job[0], key, job[1]), jobs))


def codes(answers: list[requests.Response]) -> dict[str, int]:
    """How many answers had each outcome: ``created`` or ``<code>:<limit>``."""
    found = []
    for answer in answers:
        if answer.status_code == 201:
            found.append("created")
            continue
        assert answer.status_code == 429, answer.text
        assert 1 <= int(answer.headers["Retry-After"]) <= 60
        body = answer.json()
        found.append(f"{body['code']}:{body.get('limit')}")
    return dict(Counter(found))


def limits_hold_exactly(bases: list[str], url: str, env: dict[str, str]) -> None:
    creates = admin(url, "apps", "create", "creates", env=env)
    live = admin(url, "apps", "create", "live", env=env)
    set_to = admin(url, "apps", "limits", creates["id"], "--creates-per-minute", "5", env=env)
    assert set_to["limits"]["creates_per_minute"] == 5
    admin(url, "apps", "limits", live["id"], "--concurrent-games", "3", env=env)
    listed = {a["id"]: a["limits"] for a in admin(url, "apps", "list", env=env)["apps"]}
    assert listed[live["id"]]["concurrent_games"] == 3
    assert listed[live["id"]]["creates_per_minute"] is None  # the server's default

    # creates a minute: 5 of 8 sent at once, whichever instance each reached
    assert codes(at_once(bases, creates["key"], 8)) == {
        "created": 5,
        "APP_LIMIT_EXCEEDED:creates_per_minute": 3,
    }
    for base in bases:
        refused = waiting_game(base, creates["key"], "late")
        assert refused.json()["limit"] == "creates_per_minute"

    # concurrent games: 3 of 7 sent at once
    answers = at_once(bases, live["key"], 7)
    assert codes(answers) == {"created": 3, "APP_LIMIT_EXCEEDED:concurrent_games": 4}
    made = [a.json()["id"] for a in answers if a.status_code == 201]
    # its player leaves one (through the other instance): cancelled, its place free at once
    player = [a.json()["players"][0] for a in answers if a.status_code == 201][0]
    minted = requests.post(
        bases[1] + f"/v1/players/{player['player_id']}/tokens",
        json={"name": "ann"},
        headers=bearer(live["key"]),
        timeout=10,
    ).json()["token"]
    left = requests.delete(
        bases[1] + f"/v1/games/{made[0]}/seat", headers=bearer(minted), timeout=10
    )
    assert left.status_code == 200, left.text
    assert codes(at_once(bases, live["key"], 4, first=100)) == {
        "created": 1,
        "APP_LIMIT_EXCEEDED:concurrent_games": 3,
    }


def test_per_app_limits_hold_exactly_across_both_instances(redis_client, redis_url, gunicorn):
    env = {"REDIS_URL": redis_url, **LIMITED}
    one, two = gunicorn(env), gunicorn(env)
    limits_hold_exactly([one.url, two.url], redis_url, {})


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[RedisServer]]:
    if redis_server_binary() is None:
        pytest.skip(INSTALL_HINT)
    with start_cluster(3) as servers:
        yield servers


def test_per_app_limits_hold_exactly_on_a_cluster(cluster):
    servers: list[GunicornServer] = []
    try:
        for node in cluster[:2]:
            env = {"REDIS_URL": node.url, "REDIS_CLUSTER": "true", **LIMITED}
            servers.append(GunicornServer(env))
            servers[-1].start()
        limits_hold_exactly(
            [server.url for server in servers], cluster[2].url, {"REDIS_CLUSTER": "true"}
        )
    finally:
        for server in servers:
            server.cleanup()
