"""200 clients quick-join 4-seat games at once, through two gunicorn instances, on a
real Redis and on a real Redis Cluster: exactly 50 games, each full and started,
every client seated once, no seat given twice.  A client answered a problem it can
act on (a 503 when the burst outlasts a request's Redis budget on a loaded machine)
retries it with the same Idempotency-Key, as clients should; the test counts those.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.redis_cluster import start_cluster
from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from tests.lobby.crowd import Crowd, check_crowd, quick_join_crowd

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason=INSTALL_HINT)

CLIENTS = 200
SEATS = 4


def crowd_fills_exact_games(servers: list[GunicornServer]) -> Crowd:
    bases = [server.url for server in servers]
    crowd = quick_join_crowd(bases, CLIENTS, SEATS)
    print(
        f"\n{CLIENTS} quick-joins in {crowd.seconds:.2f} s; problems retried: "
        f"{dict(crowd.retried) or 'none'}; clients left without a seat: {len(crowd.problems)}"
    )
    assert not crowd.problems, crowd.problems  # every client seated in the end
    games = check_crowd(bases[0], crowd, CLIENTS, SEATS)
    assert len(games) == CLIENTS // SEATS
    listed = []
    cursor = None
    started = time.monotonic()
    while True:
        page = requests.get(
            f"{bases[1]}/v1/games",
            params={"status": "playing", "limit": 7, **({"cursor": cursor} if cursor else {})},
            timeout=10,
        ).json()
        listed += [entry["id"] for entry in page["games"]]
        cursor = page["next"]
        if cursor is None:
            break
    print(f"listed in pages of 7 in {time.monotonic() - started:.2f} s")
    assert sorted(listed) == games, "the lobby lists every started game once"
    waiting = requests.get(f"{bases[0]}/v1/games", timeout=10).json()
    assert waiting["games"] == [], "no half-filled game is left waiting"
    return crowd


def two_instances(gunicorn, env: dict[str, str]) -> list[GunicornServer]:
    """Two instances of two workers each (stopped by the ``gunicorn`` fixture)."""
    return [gunicorn({**env, "WEB_CONCURRENCY": "2"}) for _ in range(2)]


def test_quick_join_crowd_on_redis(redis_client, redis_url: str, gunicorn) -> None:
    crowd_fills_exact_games(two_instances(gunicorn, {"REDIS_URL": redis_url}))
    games = redis_client.keys("t13:{*}:state")
    assert len(games) == CLIENTS // SEATS, "no game made but those 50"


@pytest.fixture
def cluster_node() -> Iterator[RedisServer]:
    with start_cluster(3) as nodes:
        yield nodes[0]


def test_quick_join_crowd_on_cluster(cluster_node: RedisServer, gunicorn) -> None:
    env = {"REDIS_URL": cluster_node.url, "REDIS_CLUSTER": "true"}
    crowd_fills_exact_games(two_instances(gunicorn, env))


def test_quick_join_crowd_when_redis_answers_too_late(redis_client, redis_url, gunicorn) -> None:
    """A Redis budget of 0.2 s per request makes the burst fail many requests
    halfway (503, Retry-After): the tickets they held are given back or kept under
    their keys, so the retried crowd still fills exactly 50 games, every client
    seated once; and as a listing gains a game before the write that gives it
    its status, the lobby still lists each game once under its status."""
    env = {"REDIS_URL": redis_url, "REDIS_TIMEOUT_SECONDS": "0.2"}
    crowd = crowd_fills_exact_games(two_instances(gunicorn, env))
    assert crowd.retried["STORE_UNAVAILABLE"] > 0, "the budget did fail requests"
    assert len(redis_client.keys("t13:{*}:state")) == CLIENTS // SEATS
