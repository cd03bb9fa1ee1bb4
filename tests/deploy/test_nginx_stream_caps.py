"""nginx's own cap on a game's events per client address (deploy/nginx.conf's
``limit_conn``), through a real nginx running the shipped config in front of a real
gunicorn whose own caps are off (RATE_LIMITS=false): one address opening more streams
than the cap gets nginx's 429 problem (and its connection closed), while a client at
another address (127.0.0.2: Linux routes all of 127/8 to lo) and the first address's
other requests are served; a stream that ends gives its place back."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from harness.events_request import EventsRequest
from harness.gunicorn_server import GunicornServer
from harness.live_game import LiveGame
from harness.nginx_server import INSTALL_HINT, NGINX_CONF, NginxServer, nginx_binary
from tests.deploy.test_topology import client_at

API_HOST = "127.0.1.3"  # the one replica nginx finds for `api`
OTHER = "127.0.0.2"
RELEASE_TIMEOUT = 10.0

pytestmark = pytest.mark.skipif(nginx_binary() is None, reason=INSTALL_HINT)


def nginx_cap() -> int:
    found = re.search(r"^\s*limit_conn\s+events_per_address\s+(\d+);", NGINX_CONF.read_text(), re.M)
    assert found, "deploy/nginx.conf caps a game's events per address"
    return int(found.group(1))


@pytest.fixture
def proxy(redis_url: str) -> Iterator[NginxServer]:
    # the API's own caps off (the harness's RATE_LIMITS=false): nginx's is the one seen
    env = {"REDIS_URL": redis_url, "SSE_HEARTBEAT_SECONDS": "0.3"}
    with GunicornServer(env, host=API_HOST) as api, NginxServer([API_HOST], api.port) as server:
        yield server


def nginx_refused(answer: EventsRequest) -> None:
    assert answer.status == 429, (answer.status, answer.body[:300])
    problem = answer.problem()
    assert problem["code"] == "TOO_MANY_STREAMS" and problem["status"] == 429
    assert "too many open streams from this address" in problem["detail"]
    assert int(answer.header("Retry-After") or "0") >= 1
    assert answer.header("X-Request-ID")
    # nginx's own answer (the API's would carry its security headers), and the
    # refused client's connection closed: it keeps nothing open at nginx
    assert answer.header("X-Content-Type-Options") is None
    assert answer.header("Connection") == "close"
    answer.close()


def test_one_address_over_nginxs_cap_is_refused_and_others_are_served(
    proxy: NginxServer, redis_client: Any, opened: Callable[..., EventsRequest]
) -> None:
    cap = nginx_cap()
    game = LiveGame.create(proxy.url)
    streams = [opened(proxy.url, game.id) for _ in range(cap)]
    assert [s.status for s in streams] == [200] * cap
    nginx_refused(opened(proxy.url, game.id))
    nginx_refused(opened(proxy.url, game.id, {}, {"after": 10_000, "wait": 5}))
    # another client: its streams and requests; and this address's other requests
    other = client_at(OTHER)
    assert opened(proxy.url, game.id, source=OTHER).status == 200
    assert other.get(game.url("/events"), timeout=10).status_code == 200
    assert other.get(game.url(""), timeout=10).status_code == 200
    assert requests.get(game.url(""), timeout=10).status_code == 200
    assert game.step()
    # a stream that ends gives its place back
    streams[0].close()
    deadline = time.monotonic() + RELEASE_TIMEOUT
    while (answer := opened(proxy.url, game.id)).status != 200:
        assert answer.status == 429
        assert time.monotonic() < deadline, "a closed stream's place was not given back"
        time.sleep(0.1)
    nginx_refused(opened(proxy.url, game.id))
    # nginx logs the refusals at warn, with the client's address
    log = (proxy.dir / "error.log").read_text(errors="replace")
    assert re.search(
        r'\[warn\].*limiting connections by zone "events_per_address".*127\.0\.0\.1', log
    )
