"""Slow clients against a real gunicorn: hundreds of them cost the others nothing.

Raw sockets play the slow clients: some send a move's headers and then trickle
its body a byte at a time, others trickle the headers themselves.  While they
are all held open, an ordinary client's ``/healthz`` and game view still answer
promptly; a trickling client is cut off in the end (a body with a 408 problem,
headers by closing the connection); and gunicorn's own answers to requests it
cannot parse (request line or headers too large, garbage) are problem+json.
"""

from __future__ import annotations

import contextlib
import json
import resource
import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from harness.gunicorn_server import GunicornServer

SLOW_BODIES = 150
SLOW_HEADERS = 150
TRICKLE_SECONDS = 1.0
PROMPT_SECONDS = 2.0
BODY_TIMEOUT_SECONDS = 4
PROBLEM_JSON = "application/problem+json"


@pytest.fixture(autouse=True)
def _enough_file_descriptors() -> None:
    """Hundreds of sockets here and in the server: raise the soft limit if it is low."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4096 if hard == resource.RLIM_INFINITY else min(4096, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _server(gunicorn: Any, redis_url: str) -> GunicornServer:
    return gunicorn({"REDIS_URL": redis_url, "BODY_TIMEOUT_SECONDS": str(BODY_TIMEOUT_SECONDS)})


def _new_game(server: GunicornServer) -> str:
    created = requests.post(
        server.url + "/v1/games", json={"players": [{"name": "a"}, {"name": "b"}]}, timeout=10
    )
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def _connect(server: GunicornServer, head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(head)
    return sock


def _slow_body_head(game_id: str) -> bytes:
    return (
        f"POST /v1/games/{game_id}/moves HTTP/1.1\r\nHost: t\r\n"
        "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n"
    ).encode()


SLOW_HEADER_HEAD = b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: "


class Trickler:
    """One thread sending a byte every TRICKLE_SECONDS on each of its sockets."""

    def __init__(self, socks: list[socket.socket]) -> None:
        self.socks = socks
        self.failed: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(TRICKLE_SECONDS):
            for index, sock in enumerate(self.socks):
                if index not in self.failed:
                    try:
                        sock.send(b"x")
                    except OSError:
                        self.failed.add(index)

    def __enter__(self) -> Trickler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


@contextlib.contextmanager
def _closing(socks: list[socket.socket]) -> Iterator[list[socket.socket]]:
    try:
        yield socks
    finally:
        for sock in socks:
            sock.close()


def _seconds(url: str) -> tuple[float, int]:
    """(seconds, status) of one GET on a fresh connection; (inf, 0) if it timed out."""
    started = time.monotonic()
    try:
        status = requests.get(url, timeout=10).status_code
    except requests.RequestException:
        return float("inf"), 0
    return time.monotonic() - started, status


def _answered_or_closed(sock: socket.socket) -> bool:
    """True if the server wrote to or closed this socket (it is readable)."""
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


def test_hundreds_of_slow_clients_do_not_stall_the_others(gunicorn: Any, redis_url: str):
    server = _server(gunicorn, redis_url)
    game_id = _new_game(server)
    socks = [_connect(server, _slow_body_head(game_id)) for _ in range(SLOW_BODIES)]
    socks += [_connect(server, SLOW_HEADER_HEAD) for _ in range(SLOW_HEADERS)]
    with _closing(socks), Trickler(socks) as trickler:
        time.sleep(0.5)  # every slow client is in: headers read, or being read
        timings = []
        for _ in range(3):
            timings.append(("healthz", *_seconds(server.url + "/healthz")))
            timings.append(("view", *_seconds(f"{server.url}/v1/games/{game_id}")))
            time.sleep(0.5)
        # all of them were still held open while the others were served
        held = [sock for sock in socks if not _answered_or_closed(sock)]
        assert not trickler.failed
    assert len(held) == len(socks), f"only {len(held)} of {len(socks)} slow clients held"
    assert all(status == 200 for _, _, status in timings), (timings, server.logs())
    slowest = max(seconds for _, seconds, _ in timings)
    assert slowest < PROMPT_SECONDS, (timings, server.logs())


def _read_until_closed(sock: socket.socket, within: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and when it closed."""
    started = time.monotonic()
    sock.settimeout(0.5)
    received = b""
    while time.monotonic() - started < within:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            break
        if not chunk:
            break
        received += chunk
    else:
        raise AssertionError(f"still open after {within} s; received {received!r}")
    return received, time.monotonic() - started


def test_trickling_clients_are_cut_off(gunicorn: Any, redis_url: str):
    server = _server(gunicorn, redis_url)
    game_id = _new_game(server)
    body = _connect(server, _slow_body_head(game_id))
    headers = _connect(server, SLOW_HEADER_HEAD)
    with _closing([body, headers]), Trickler([body, headers]):
        answer, seconds = _read_until_closed(body, within=BODY_TIMEOUT_SECONDS + 10)
        assert answer.startswith(b"HTTP/1.1 408 "), (answer, server.logs())
        head, _, payload = answer.partition(b"\r\n\r\n")
        assert f"content-type: {PROBLEM_JSON}".encode() in head.lower()
        assert b'"code":"REQUEST_TIMEOUT"' in payload
        assert seconds < BODY_TIMEOUT_SECONDS + 8
        # headers never completed: the connection is closed, without an answer
        answer, _ = _read_until_closed(headers, within=15)
        assert answer == b""
    # and the server is fine
    assert requests.get(server.url + "/healthz", timeout=5).status_code == 200


def _raw_answer(server: GunicornServer, request: bytes) -> tuple[int, dict[str, str], Any]:
    sock = _connect(server, request)
    with _closing([sock]):
        answer, _ = _read_until_closed(sock, within=10)
    head, _, payload = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    fields = dict(line.split(": ", 1) for line in lines[1:])
    headers = {name.lower(): value for name, value in fields.items()}
    return status, headers, json.loads(payload)


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: t\r\n\r\n", 414, "URI_TOO_LONG"),
        (
            b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: " + b"b" * 10_000 + b"\r\n\r\n",
            431,
            "HEADERS_TOO_LARGE",
        ),
        (
            b"GET /healthz HTTP/1.1\r\n"
            + b"".join(b"X-%d: 1\r\n" % i for i in range(150))
            + b"\r\n",
            431,
            "HEADERS_TOO_LARGE",
        ),
        (b"NOT HTTP AT ALL\r\n\r\n", 400, "BAD_REQUEST"),
    ],
    ids=["request-line-10KB", "header-10KB", "150-headers", "garbage"],
)
def test_requests_gunicorn_cannot_parse_get_problem_json(
    gunicorn: Any, redis_url: str, request_bytes: bytes, status: int, code: str
):
    server = _server(gunicorn, redis_url)
    got_status, headers, body = _raw_answer(server, request_bytes)
    assert got_status == status, body
    assert headers["content-type"] == PROBLEM_JSON
    assert int(headers["content-length"]) > 0
    assert body["status"] == status and body["code"] == code
    assert body["type"].endswith("/" + code.lower().replace("_", "-"))
    assert set(body) >= {"type", "title", "status", "detail", "code"}
    assert "<html>" not in str(body)


@pytest.mark.parametrize("store", ["redis", "embedded"])
def test_waiting_long_polls_do_not_stall_the_others(gunicorn: Any, redis_url: str, store: str):
    """Long polls wait on the store without blocking the worker (one worker here)."""
    server = gunicorn({"REDIS_URL": redis_url} if store == "redis" else {})
    game_id = _new_game(server)
    events = f"{server.url}/v1/games/{game_id}/events"
    last = requests.get(events, timeout=10).json()["last_seq"]
    answers: list[int] = []

    def long_poll() -> None:
        reply = requests.get(events, params={"after": last, "wait": 6}, timeout=20)
        answers.append(reply.status_code)

    polls = [threading.Thread(target=long_poll, daemon=True) for _ in range(40)]
    for poll in polls:
        poll.start()
    time.sleep(1.0)  # every poll is waiting in the worker
    timings = [("healthz", *_seconds(server.url + "/healthz"))]
    timings.append(("view", *_seconds(f"{server.url}/v1/games/{game_id}")))
    assert not answers, "the long polls answered before their wait"
    for poll in polls:
        poll.join(20)
    assert answers == [200] * len(polls)
    assert all(status == 200 for _, _, status in timings), (timings, server.logs())
    assert max(seconds for _, seconds, _ in timings) < PROMPT_SECONDS, timings
