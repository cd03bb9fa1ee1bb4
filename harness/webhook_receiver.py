"""A webhook receiver on 127.0.0.1, for tests and benchmarks: a real HTTP server in a
thread that keeps every request it gets, and answers as it is told.

    with WebhookReceiver() as receiver:
        ... receiver.url ...
        receiver.status = 503        # answer this from now on
        receiver.redirect = "http://10.0.0.1/"   # answer 307 with this Location
        receiver.delay = 1.0         # wait this long before answering
        receiver.trickle = 0.2       # answer one byte of a header every 0.2 s...
        receiver.trickle_for = 30    # ...for this long (or until the client hangs up)
        receiver.wait_for(lambda got: len(got) >= 3)
        receiver.wait_until(lambda: len(receiver.visits) >= 2)

:attr:`WebhookReceiver.visits` records every request as it came and when its
connection ended, so tests can tell which attempts were in flight at once.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson


@dataclass(frozen=True)
class Received:
    """One request as the receiver got it."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    """``time.time()`` when its body was read (before any :attr:`WebhookReceiver.delay`)."""
    answered: int

    def json(self) -> Any:
        return orjson.loads(self.body)


@dataclass
class Visit:
    """One request from its body's arrival to the end of its answer or connection."""

    msg_id: str | None
    start: float
    """``time.monotonic()`` when its body was read."""
    end: float | None = None
    """``time.monotonic()`` when it was answered or the client hung up (None: not yet)."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a worker's concurrent deliveries, and more


class WebhookReceiver:
    """See the module's docstring; :attr:`received` lists what came, in order."""

    def __init__(self) -> None:
        self.status = 204
        self.redirect: str | None = None
        self.delay = 0.0
        self.trickle: float | None = None
        self.trickle_for = 30.0
        self.received: list[Received] = []
        self.visits: list[Visit] = []
        self._closing = threading.Event()
        self._lock = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                visit = Visit(self.headers.get("webhook-id"), time.monotonic())
                with receiver._lock:
                    receiver.visits.append(visit)
                    receiver._lock.notify_all()
                try:
                    self._answer(body)
                finally:
                    with receiver._lock:
                        visit.end = time.monotonic()
                        receiver._lock.notify_all()

            def _trickle(self) -> bool:
                """Answer a status line, then a header one byte at a time; True if it
                was finished, False if the client hung up first."""
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                until = time.monotonic() + receiver.trickle_for
                step = receiver.trickle or 0.0
                while time.monotonic() < until and not receiver._closing.is_set():
                    readable, _, _ = select.select([self.connection], [], [], step)
                    try:
                        if readable and not self.connection.recv(1024):
                            return False  # the client hung up
                        self.wfile.write(b"a")
                    except OSError:
                        return False
                self.wfile.write(b"\r\nContent-Length: 0\r\n\r\n")
                return True

            def _answer(self, body: bytes) -> None:
                at = time.time()
                if receiver.trickle:
                    self.close_connection = True
                    if self._trickle():
                        with receiver._lock:
                            headers = {k.lower(): v for k, v in self.headers.items()}
                            received = Received(self.path, headers, body, at, 200)
                            receiver.received.append(received)
                    return
                time.sleep(receiver.delay)
                status, location = receiver.status, receiver.redirect
                if location is not None:
                    status = 307
                with receiver._lock:
                    receiver.received.append(
                        Received(
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                            at,
                            status,
                        )
                    )
                    receiver._lock.notify_all()
                self.send_response(status)
                if location is not None:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.port = int(self._server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_until(self, done: Callable[[], bool], timeout: float = 30) -> bool:
        """Wait until ``done()`` (called holding the receiver's lock, so
        :attr:`visits` and :attr:`received` hold still); False if ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def visits_now(self) -> list[Visit]:
        """A copy of :attr:`visits` (each one as it is now)."""
        with self._lock:
            return [Visit(v.msg_id, v.start, v.end) for v in self.visits]

    def delivered(self) -> list[Received]:
        """The requests answered 2xx, in the order they came."""
        with self._lock:
            return [r for r in self.received if 200 <= r.answered < 300]

    def wait_for(self, done: Callable[[list[Received]], bool], timeout: float = 30) -> bool:
        """Wait until ``done(requests answered 2xx)``; False if ``timeout`` passed first."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not done([r for r in self.received if 200 <= r.answered < 300]):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True
