"""200 clients quick-join 4-seat games at once, through two gunicorn instances, on a
real Redis and on a real Redis Cluster: exactly 50 games, each full and started,
every client seated once (or answered a problem it can act on), no seat given twice.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.redis_cluster import start_cluster
from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from tests.lobby.crowd import check_crowd, quick_join_crowd

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason=INSTALL_HINT)

CLIENTS = 200
SEATS = 4


def two_instances(env: dict[str, str]) -> Iterator[list[GunicornServer]]:
    servers = [GunicornServer({**env, "WEB_CONCURRENCY": "2"}, access_log=False) for _ in range(2)]
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.cleanup()


def crowd_fills_exact_games(servers: list[GunicornServer]) -> None:
    bases = [server.url for server in servers]
    crowd = quick_join_crowd(bases, CLIENTS, SEATS)
    print(f"\n{CLIENTS} quick-joins in {crowd.seconds:.2f} s, problems: {len(crowd.problems)}")
    assert not crowd.problems, crowd.problems  # nothing refused here: the lobby had room
    games = check_crowd(bases[0], crowd, CLIENTS, SEATS)
    assert len(games) == CLIENTS // SEATS
    listed = []
    cursor = None
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
    assert sorted(listed) == games, "the lobby lists every started game once"
    waiting = requests.get(f"{bases[0]}/v1/games", timeout=10).json()
    assert waiting["games"] == [], "no half-filled game is left waiting"


@pytest.fixture
def on_redis(redis_client, redis_url: str) -> Iterator[list[GunicornServer]]:
    yield from two_instances({"REDIS_URL": redis_url})


def test_quick_join_crowd_on_redis(on_redis: list[GunicornServer]) -> None:
    crowd_fills_exact_games(on_redis)


@pytest.fixture
def on_cluster() -> Iterator[list[GunicornServer]]:
    with start_cluster(3) as nodes:
        node: RedisServer = nodes[0]
        yield from two_instances({"REDIS_URL": node.url, "REDIS_CLUSTER": "true"})


def test_quick_join_crowd_on_cluster(on_cluster: list[GunicornServer]) -> None:
    crowd_fills_exact_games(on_cluster)
