"""Event streams and long polls through a real nginx running deploy/nginx.conf.

nginx (Debian's binary, unprivileged, in the foreground) proxies to a real gunicorn
on the test Redis (harness/nginx_server.py changes only what ties the config to
compose).  An SSE stream opened through it must deliver each move's events before
the next move is made -- not held in a proxy buffer until the stream ends -- and
pass the heartbeats; a long poll must still answer; a client that hangs up on nginx
must free its stream on the API; nginx's access log must not hold a stream ticket.
The SSE stream is checked twice: as shipped, and in a harsher setting -- gzip on
for every type at the http level (Debian's stock nginx.conf turns gzip on) and the
API's ``X-Accel-Buffering: no`` ignored -- where only the events location's own
``proxy_buffering off`` and ``gzip off`` keep the stream flowing (with neither,
nothing arrives).
"""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.live_game import LiveGame
from harness.nginx_server import INSTALL_HINT, NginxServer, nginx_binary
from harness.sse import Frame, frames

HARSH = "gzip everywhere, X-Accel-Buffering ignored"
HARSH_EXTRA = (
    "gzip on; gzip_types *; gzip_min_length 0; gzip_proxied any; "
    "proxy_ignore_headers X-Accel-Buffering;"
)
API_HOST = "127.0.1.1"  # the one replica nginx finds for `api`
HEARTBEAT_SECONDS = 0.3
SSE = {"Accept": "text/event-stream"}
ARRIVAL_TIMEOUT = 5.0  # generous: a buffered event would never arrive while the stream is open

pytestmark = pytest.mark.skipif(nginx_binary() is None, reason=INSTALL_HINT)


@pytest.fixture(scope="module")
def upstream(redis_url: str) -> Iterator[GunicornServer]:
    env = {"REDIS_URL": redis_url, "SSE_HEARTBEAT_SECONDS": str(HEARTBEAT_SECONDS)}
    with GunicornServer(env, host=API_HOST) as server:
        yield server


@pytest.fixture
def proxy(request: pytest.FixtureRequest, upstream: GunicornServer) -> Iterator[NginxServer]:
    """nginx as shipped, or with the parameter HARSH: gzip everywhere, the API's header lost."""
    extra = HARSH_EXTRA if getattr(request, "param", "") == HARSH else ""
    with NginxServer([API_HOST], upstream.port, extra=extra) as server:
        yield server


class FrameReader:
    """Reads an SSE stream (harness/sse.py) on a thread; each frame comes out with the
    time it was read."""

    def __init__(self, url: str, token: str) -> None:
        headers = {
            "Accept": "text/event-stream",
            "Accept-Encoding": "gzip",  # as browsers send it
            "Authorization": f"Bearer {token}",
        }
        self.response = requests.get(url, headers=headers, stream=True, timeout=10)
        self.frames: queue.Queue[tuple[float, Frame]] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for frame in frames(self.response):
                self.frames.put((time.monotonic(), frame))
                if self._stop.is_set():  # heartbeats keep coming: this is soon
                    break
        finally:
            self.response.close()

    def next(self, timeout: float = ARRIVAL_TIMEOUT) -> tuple[float, Frame]:
        try:
            return self.frames.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"nothing through nginx within {timeout} s")

    def next_event(self) -> dict[str, Any]:
        """The next event's JSON, heartbeats and the retry hint skipped."""
        while True:
            _at, frame = self.next()
            if frame.kind == "event":
                return dict(frame.json())

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@pytest.mark.parametrize("proxy", ["as shipped", HARSH], indirect=True)
def test_sse_events_and_heartbeats_pass_nginx_as_they_happen(proxy: NginxServer) -> None:
    game = LiveGame.create(proxy.url, players=2)
    reader = FrameReader(game.url("/events"), game.tokens[0])
    try:
        assert reader.response.status_code == 200
        assert reader.response.headers["Content-Type"].startswith("text/event-stream")
        assert reader.response.headers["Cache-Control"] == "no-cache"
        assert "Content-Encoding" not in reader.response.headers
        received: list[dict[str, Any]] = []

        def catch_up() -> None:
            expected = game.events(0)
            while len(received) < len(expected):
                received.append(reader.next_event())
            assert received == expected

        for _ in range(8):
            catch_up()  # every event so far (the deal, then each move's) before the next move
            assert game.step()
        catch_up()
        # Quiet now: heartbeats pass, one at a time, and nothing else.
        beats: list[float] = []
        while len(beats) < 3:
            at, frame = reader.next()
            assert frame.kind == "comment" and frame.comments == ["keep-alive"], frame
            beats.append(at)
        assert beats[-1] - beats[0] >= HEARTBEAT_SECONDS, "heartbeats arrived in one burst"
    finally:
        reader.close()


def test_long_polls_pass_nginx(proxy: NginxServer) -> None:
    game = LiveGame.create(proxy.url, players=2)
    page = requests.get(game.url("/events"), timeout=10).json()
    last, last_id = page["last_seq"], page["last_id"]
    idle = requests.get(game.url("/events"), params={"after": last_id, "wait": 1}, timeout=10)
    assert idle.status_code == 200
    assert idle.json() == {"events": [], "last_seq": last, "last_id": last_id}
    with ThreadPoolExecutor(max_workers=1) as pool:
        params = {"after": last, "wait": 20}
        waiting = pool.submit(requests.get, game.url("/events"), params=params, timeout=30)
        time.sleep(0.2)
        assert not waiting.done()
        assert game.step()
        woken = waiting.result(timeout=ARRIVAL_TIMEOUT)
    assert woken.status_code == 200
    assert woken.json()["events"] == [e for e in game.events() if e["seq"] > last]


def _followers(upstream: GunicornServer) -> dict[str, float]:
    """The API's ``t13_event_followers`` gauge (one worker: its own count), by kind."""
    text = requests.get(upstream.url + "/metrics", timeout=10).text
    found = re.finditer(r'^t13_event_followers\{kind="(\w+)"\} (\S+)$', text, re.M)
    return {m.group(1): float(m.group(2)) for m in found if m.group(1) != "long_poll"}


def _until(upstream: GunicornServer, wanted: dict[str, float]) -> None:
    deadline = time.monotonic() + ARRIVAL_TIMEOUT
    while (seen := _followers(upstream)) != wanted:
        assert time.monotonic() < deadline, f"followers {seen}, expected {wanted}"
        time.sleep(0.05)


def test_a_client_hanging_up_on_nginx_frees_its_stream(
    proxy: NginxServer, upstream: GunicornServer
) -> None:
    game = LiveGame.create(proxy.url, players=2)
    opened = [
        requests.get(game.url("/events"), headers={"Accept": kind}, stream=True, timeout=10)
        for kind in ["text/event-stream"] * 4 + ["application/x-ndjson"] * 2
    ]
    try:
        _until(upstream, {"sse": 4, "ndjson": 2})
    finally:
        for response in opened:
            response.close()
    # nginx closes its upstream connection when the client goes; the API notices at
    # its next write (a heartbeat at the latest) and lets the stream go.
    _until(upstream, {"sse": 0, "ndjson": 0})


def test_nginx_logs_a_stream_ticket_masked(proxy: NginxServer) -> None:
    game = LiveGame.create(proxy.url, players=2)
    answer = requests.post(game.url("/stream-tickets"), headers=game.auth(0), timeout=10)
    assert answer.status_code == 201, answer.text
    ticket = answer.json()["ticket"]
    params = {"ticket": ticket, "after": 3}  # as docs/API.md's EventSource example asks
    with requests.get(
        game.url("/events"), params=params, headers=SSE, stream=True, timeout=10
    ) as r:
        assert r.status_code == 200
        assert any(f.kind == "event" and f.json().get("private") for f in frames(r)), (
            "seat 0's deal"
        )
    path = f"/v1/games/{game.id}/events"
    deadline = time.monotonic() + ARRIVAL_TIMEOUT
    while not (found := [e for e in proxy.access_entries() if e["path"] == path]):
        assert time.monotonic() < deadline, (
            f"the stream's request is not in the log:\n{proxy.access_log()}"
        )
        time.sleep(0.05)
    assert found[0]["query"] == "ticket=<redacted>&after=3"
    # the name as the API decodes it, and a query naming the ticket twice
    for query in (f"after=3&%74icket={ticket}", f"ticket={ticket}&t%69cket={ticket}"):
        connection = HTTPConnection("127.0.0.1", urlsplit(proxy.url).port, timeout=10)
        connection.request("GET", f"{path}?{query}")  # as is: requests would decode %74
        connection.getresponse().read()
        connection.close()
    expected = ["ticket=<redacted>&after=3", "after=3&%74icket=<redacted>", "<redacted>"]
    while [e["query"] for e in proxy.access_entries() if e["path"] == path] != expected:
        assert time.monotonic() < deadline + ARRIVAL_TIMEOUT, proxy.access_log()
        time.sleep(0.05)
    assert ticket not in proxy.access_log()
