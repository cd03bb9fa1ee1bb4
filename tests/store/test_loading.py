"""A Redis restarted and still loading its data answers every command LOADING: the store
says unavailable (503 ``STORE_UNAVAILABLE`` with ``Retry-After``), never 500.

The throwaway server is made slow to load on purpose (``key-load-delay`` per key,
about 120 s for its filler keys), so every request here meets the loading however
loaded the machine is; each test checks the server is still loading afterwards,
and the server is killed at the end.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from harness.redis_server import RedisServer, redis_server_binary
from service.config import Config
from service.store import GameStore, StoreUnavailable, connect
from tests.api.conftest import Game, create_game, make_app

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason="needs redis-server on PATH")

FILLER_KEYS = 6000
KEY_LOAD_DELAY_MICROSECONDS = 20_000
"""Per key loaded: 6,000 keys take 120 s.  Each value is over the 1,024 bytes after
which the loading server answers its clients, so a reply waits about 20 ms."""


@dataclass
class Loading:
    server: RedisServer
    game_id: str
    tokens: dict[int, str]

    def still_loading(self) -> bool:
        probe = self.server.client()
        try:
            return int(probe.info("persistence")["loading"]) == 1
        finally:
            probe.close()


@pytest.fixture(scope="module")
def loading() -> Iterator[Loading]:
    """A redis-server holding a game, restarted from its RDB and loading it (slowly)."""
    server = RedisServer(
        extra_args=(
            "--key-load-delay", str(KEY_LOAD_DELAY_MICROSECONDS),
            "--loading-process-events-interval-bytes", "1024",
            "--rdbcompression", "no",
        )
    )  # fmt: skip
    server.start()
    try:
        game = create_game(make_app(server.url).test_client(), [{"name": "a"}, {"name": "b"}])
        client = server.client()
        pipe = client.pipeline(transaction=False)
        for number in range(FILLER_KEYS):
            pipe.set(f"filler:{number}", os.urandom(1100))
        pipe.execute()
        client.save()
        client.close()
        server.kill()
        server.start(answering=False)
        found = Loading(server, game.id, game.tokens)
        deadline = time.monotonic() + 30
        while True:
            try:
                if found.still_loading():
                    break
            except redis.ConnectionError:  # not listening yet
                pass
            assert time.monotonic() < deadline, "the restarted server never said it was loading"
            time.sleep(0.05)
        yield found
    finally:
        server.kill()
        server.cleanup()


def test_every_store_call_raises_store_unavailable_while_redis_loads(loading: Loading) -> None:
    config = Config.from_env({"REDIS_URL": loading.server.url})
    client = connect(config)
    store = GameStore(client, config=config)
    gid = loading.game_id
    calls: dict[str, Callable[[], Any]] = {
        "load_public": lambda: store.load_public(gid),
        "load_version": lambda: store.load_version(gid),
        "load_seat_view": lambda: store.load_seat_view(gid),
        "load_game": lambda: store.load_game(gid),
        "load_with_idempotency": lambda: store.load_with_idempotency(gid, "k" * 64),
        "commit": lambda: store.commit(gid, 1, b"doc", idempotency=("k" * 64, b"f", b"r")),
        "events": lambda: store.events(gid, 0),
        "create": lambda: store.create("loadingtest", b"doc"),
        "issue_ticket": lambda: store.issue_ticket(gid, "ticket", 0, "holder", 60),
        "open_ticket": lambda: store.open_ticket(gid, "ticket", 60),
        "renew_ticket": lambda: store.renew_ticket(gid, "ticket", 60),
        "void_ticket": lambda: store.void_ticket(gid, "ticket"),
    }
    try:
        for name, call in calls.items():
            with pytest.raises(StoreUnavailable, match="LOADING|loading"):
                call()
            assert loading.still_loading(), f"{name}: the server finished loading meanwhile"
        assert store.ping() is False
    finally:
        client.close()


def _requests(client: FlaskClient, game: Game) -> dict[str, Callable[[], Any]]:
    url = f"/v1/games/{game.id}"
    draw = {"type": "draw", "source": "stock"}
    return {
        "public view": lambda: client.get(url),
        "player view": lambda: client.get(f"{url}/view", headers=game.auth(0)),
        "move": lambda: client.post(f"{url}/moves", json=draw, headers=game.auth(0)),
        "keyed move": lambda: client.post(
            f"{url}/moves", json=draw, headers={**game.auth(0), "Idempotency-Key": "a1" * 16}
        ),
        "events": lambda: client.get(f"{url}/events?after=0", headers=game.auth(0)),
        "long poll": lambda: client.get(f"{url}/events?after=0&wait=5", headers=game.auth(0)),
        "stream": lambda: client.get(
            f"{url}/events", headers={**game.auth(0), "Accept": "text/event-stream"}
        ),
        "new game": lambda: client.post("/v1/games", json={"players": [{"name": "x"}] * 2}),
    }


@pytest.mark.parametrize("fast_lane", ["true", "false"])
def test_requests_while_redis_loads_get_503_store_unavailable_with_retry_after(
    loading: Loading, fast_lane: str
) -> None:
    client = make_app(loading.server.url, FAST_LANE=fast_lane).test_client()
    game = Game(client, loading.game_id, loading.tokens)
    for name, request in _requests(client, game).items():
        answer = request()
        assert answer.status_code == 503, (name, answer.status_code, answer.get_data())
        assert answer.mimetype == "application/problem+json", name
        assert answer.get_json()["code"] == "STORE_UNAVAILABLE", name
        assert int(answer.headers["Retry-After"]) >= 1, name
        assert loading.still_loading(), f"{name}: the server finished loading meanwhile"
    ready = client.get("/readyz")
    assert ready.status_code == 503 and ready.get_json()["code"] == "STORE_UNAVAILABLE"
