"""Event streams and long polls through a real nginx running deploy/nginx.conf.

nginx (Debian's binary, unprivileged, in the foreground) proxies to a real gunicorn
on the test Redis (harness/nginx_server.py changes only what ties the config to
compose).  An SSE stream opened through it must deliver each move's event before
the next move is made -- not held in a proxy buffer until the stream ends -- and
pass the heartbeats; a long poll must still answer.  The stream is checked twice:
as shipped, and in a harsher setting -- gzip on for every type at the http level
(Debian's stock nginx.conf turns gzip on) and the API's ``X-Accel-Buffering: no``
ignored -- where only the events location's own ``proxy_buffering off`` and
``gzip off`` keep the stream flowing (with neither, nothing arrives).
"""

from __future__ import annotations

import http.client
import json
import queue
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.nginx_server import NginxServer, nginx_binary
from service.bots.sse import Comment, Event, SseParser
from tests.bots.game_setup import create_game, seat_tokens

HARSH = "gzip everywhere, X-Accel-Buffering ignored"
HARSH_EXTRA = (
    "gzip on; gzip_types *; gzip_min_length 0; gzip_proxied any; "
    "proxy_ignore_headers X-Accel-Buffering;"
)
HEARTBEAT_SECONDS = 0.3
ARRIVAL_TIMEOUT = 5.0  # generous: a buffered event would never arrive while the stream is open

pytestmark = pytest.mark.skipif(nginx_binary() is None, reason="nginx not installed")


@pytest.fixture(scope="module")
def upstream(redis_url: str) -> Iterator[GunicornServer]:
    env = {"REDIS_URL": redis_url, "SSE_HEARTBEAT_SECONDS": str(HEARTBEAT_SECONDS)}
    with GunicornServer(env) as server:
        yield server


@pytest.fixture
def proxy(request: pytest.FixtureRequest, upstream: GunicornServer) -> Iterator[NginxServer]:
    """nginx as shipped, or with the parameter HARSH: gzip everywhere, the API's header lost."""
    extra = HARSH_EXTRA if getattr(request, "param", "") == HARSH else ""
    with NginxServer(upstream.port, extra=extra) as server:
        yield server


class FrameReader:
    """Reads an SSE stream in a thread; every item comes out with the time it was read."""

    def __init__(self, port: int, path: str, token: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {
            "Accept": "text/event-stream",
            "Accept-Encoding": "gzip",  # as browsers send it
            "Authorization": f"Bearer {token}",
        }
        self.connection.request("GET", path, headers=headers)
        assert self.connection.sock is not None
        self.sock: socket.socket = self.connection.sock
        self.response = self.connection.getresponse()
        self.items: queue.Queue[tuple[float, Event | Comment]] = queue.Queue()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        parser = SseParser()
        try:
            while line := self.response.readline():
                for item in parser.feed(line.decode()):
                    if isinstance(item, Event | Comment):
                        self.items.put((time.monotonic(), item))
        except (OSError, http.client.HTTPException):
            pass  # hung up by close()

    def next_event(self, timeout: float) -> dict[str, Any]:
        """The next event's JSON (heartbeats skipped); fails if none arrives in time."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                _at, item = self.items.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no event through nginx within {timeout} s")
            if isinstance(item, Event):
                return dict(json.loads(item.data))

    def close(self) -> None:
        """Hang up: this ends the reading thread's blocked read, then the rest is closed."""
        self.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=5)
        self.connection.close()


def _view(url: str, game_id: str, token: str) -> dict[str, Any]:
    answer = requests.get(
        f"{url}/v1/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"}, timeout=10
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def _move(url: str, game_id: str, tokens: list[str]) -> tuple[int, dict[str, Any]]:
    """Whoever's turn it is plays their first legal move; (seat, move)."""
    seat = _view(url, game_id, tokens[0])["round"]["turn"]
    move = _view(url, game_id, tokens[seat])["legal_moves"][0]
    answer = requests.post(
        f"{url}/v1/games/{game_id}/moves",
        json=move,
        headers={"Authorization": f"Bearer {tokens[seat]}"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return seat, move


PLAYED = {"draw": "drew", "discard": "discarded"}  # a first legal move is one of these


@pytest.mark.parametrize("proxy", ["as shipped", HARSH], indirect=True)
def test_sse_events_and_heartbeats_pass_nginx_as_they_happen(proxy: NginxServer) -> None:
    created = create_game(proxy.url, [{"name": "a"}, {"name": "b"}], "nginx-sse")
    game_id, tokens = created["id"], seat_tokens(created)
    reader = FrameReader(proxy.port, f"/v1/games/{game_id}/events", tokens[0])
    try:
        assert reader.response.status == 200
        assert reader.response.getheader("Content-Type", "").startswith("text/event-stream")
        assert reader.response.getheader("Cache-Control") == "no-cache"
        assert reader.response.getheader("Content-Encoding") is None
        backlog = [reader.next_event(ARRIVAL_TIMEOUT)]
        while backlog[-1]["type"] != "round_started":
            backlog.append(reader.next_event(ARRIVAL_TIMEOUT))
        last = backlog[-1]["seq"]
        for _ in range(6):
            seat, move = _move(proxy.url, game_id, tokens)
            # This move's event arrives before the next move is made (after those
            # before it: the seat's own cards, whose turn it is).
            event = reader.next_event(ARRIVAL_TIMEOUT)
            while (event["type"], event.get("seat"), event.get("private")) != (
                PLAYED[move["type"]],
                seat,
                None,
            ):
                assert event["seq"] > last, event
                last = event["seq"]
                event = reader.next_event(ARRIVAL_TIMEOUT)
            assert event["seq"] > last
            last = event["seq"]
        # Idle: heartbeats pass, one at a time.
        beats: list[float] = []
        deadline = time.monotonic() + 10
        while len(beats) < 3:
            at, item = reader.items.get(timeout=max(0.0, deadline - time.monotonic()))
            if isinstance(item, Event):  # the rest of the last move's change
                assert int(item.id) > last, item
                last = int(item.id)
            elif item.text == "keep-alive":
                beats.append(at)
        assert beats[-1] - beats[0] >= HEARTBEAT_SECONDS, "heartbeats arrived in one burst"
    finally:
        reader.close()


def test_long_polls_pass_nginx(proxy: NginxServer) -> None:
    created = create_game(proxy.url, [{"name": "a"}, {"name": "b"}], "nginx-poll")
    game_id, tokens = created["id"], seat_tokens(created)
    url = f"{proxy.url}/v1/games/{game_id}/events"
    last = requests.get(url, timeout=10).json()["last_seq"]
    idle = requests.get(url, params={"after": last, "wait": 1}, timeout=10)
    assert idle.status_code == 200 and idle.json() == {"events": [], "last_seq": last}
    with ThreadPoolExecutor(max_workers=1) as pool:
        waiting = pool.submit(requests.get, url, params={"after": last, "wait": 20}, timeout=30)
        time.sleep(0.2)
        assert not waiting.done()
        seat, move = _move(proxy.url, game_id, tokens)
        woken = waiting.result(timeout=ARRIVAL_TIMEOUT)
    assert woken.status_code == 200
    first = woken.json()["events"][0]
    assert (first["type"], first["seat"]) == (PLAYED[move["type"]], seat)
