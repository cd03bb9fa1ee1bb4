"""A Redis that stops answering (SIGSTOP: its sockets still accept, nothing replies).

A real gunicorn serves the app on a throwaway redis-server; the server is frozen
and 16 requests of every kind are fired at once.  Each must answer 503
STORE_UNAVAILABLE with Retry-After within a few seconds (the per-request Redis
budget and the circuit breaker), not hang for the stall; after SIGCONT the
service answers 200 again by itself.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.redis_server import RedisServer, redis_server_binary

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason="needs redis-server")

BOUND_SECONDS = 4.0
"""Generous: the documented bound is REDIS_TIMEOUT_SECONDS (2 s) per request."""


@pytest.fixture
def frozen_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        if server.pid is not None:
            os.kill(server.pid, signal.SIGCONT)  # never leave it stopped
        server.cleanup()


def _requests(url: str, game: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    gid = game["id"]
    auth = {"Authorization": f"Bearer {game['players'][0]['token']}"}
    move = {"type": "draw", "source": "stock"}
    two = {"players": [{"name": "x"}, {"name": "y"}]}
    kinds = [
        ("GET", f"{url}/v1/games/{gid}", {}),
        ("GET", f"{url}/v1/games/{gid}/view", {"headers": auth}),
        ("POST", f"{url}/v1/games/{gid}/moves", {"headers": auth, "json": move}),
        ("POST", f"{url}/v1/games", {"json": two}),
        ("GET", f"{url}/v1/games/{gid}/events?after=0&wait=5", {}),
        ("GET", f"{url}/v1/games/{gid}/events", {}),
        ("GET", f"{url}/readyz", {}),
        ("POST", f"{url}/v1/games/{gid}/players", {"json": {"name": "z"}}),
    ]
    return kinds * 2


def _timed(method: str, url: str, kwargs: dict[str, Any]) -> tuple[float, Any]:
    started = time.monotonic()
    try:
        response: Any = requests.request(method, url, timeout=30, **kwargs)
    except requests.RequestException as exc:
        response = exc
    return time.monotonic() - started, response


def test_requests_answer_503_promptly_while_redis_is_stopped(frozen_redis):
    env = {"REDIS_URL": frozen_redis.url, "RATE_LIMITS": "true"}
    with GunicornServer(env) as server:
        made = requests.post(
            server.url + "/v1/games",
            json={"players": [{"name": "a"}, {"name": "b"}], "seed": "stall"},
            timeout=10,
        )
        assert made.status_code == 201, made.text
        game = made.json()
        assert requests.get(f"{server.url}/v1/games/{game['id']}", timeout=5).status_code == 200
        calls = _requests(server.url, game)
        assert frozen_redis.pid is not None
        os.kill(frozen_redis.pid, signal.SIGSTOP)
        try:
            with ThreadPoolExecutor(len(calls)) as pool:
                answers = list(pool.map(lambda call: _timed(*call), calls))
            readyz = [_timed("GET", server.url + "/readyz", {}) for _ in range(3)]
        finally:
            os.kill(frozen_redis.pid, signal.SIGCONT)
        slow = [
            (call[0], call[1].split("/", 3)[-1], round(took, 1), getattr(r, "status_code", r))
            for call, (took, r) in zip(calls, answers, strict=True)
            if took > BOUND_SECONDS or not isinstance(r, requests.Response)
        ]
        assert not slow, slow
        for call, (_took, response) in zip(calls, answers, strict=True):
            assert response.status_code == 503, (call[:2], response.status_code, response.text)
            assert response.headers["Content-Type"].startswith("application/problem+json")
            assert response.json()["code"] == "STORE_UNAVAILABLE"
            assert int(response.headers["Retry-After"]) >= 1
        for took, response in readyz:
            assert response.status_code == 503 and int(response.headers["Retry-After"]) >= 1
            assert took < 1.5, took  # a readiness probe's usual timeout is 1 s
        deadline = time.monotonic() + 15
        while True:
            public = requests.get(f"{server.url}/v1/games/{game['id']}", timeout=10)
            ready = requests.get(server.url + "/readyz", timeout=10)
            if public.status_code == ready.status_code == 200:
                break
            assert time.monotonic() < deadline, (public.status_code, ready.status_code)
            time.sleep(0.2)
        again = requests.post(
            server.url + "/v1/games", json={"players": [{"name": "c"}, {"name": "d"}]}, timeout=10
        )
        assert again.status_code == 201, again.text
        auth = {"Authorization": f"Bearer {game['players'][0]['token']}"}
        view = requests.get(f"{server.url}/v1/games/{game['id']}/view", headers=auth, timeout=10)
        assert view.status_code == 200
