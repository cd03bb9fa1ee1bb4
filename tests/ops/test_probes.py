"""The probes stay truthful while clients wait: waiting clients hold greenlets, not
the worker, so /healthz and /readyz answer within the Kubernetes probes' timeouts
(deploy/k8s/deployment.yaml) however many long polls and streams are open.

The worst case of one worker is run: hundreds of waiting clients (a thread-per-request
server with 2 x 8 threads failed its probes with 17), then the probes, timed.
"""

from __future__ import annotations

import contextlib
import re
import socket
import time
from typing import Any

import requests

from harness.gunicorn_server import GunicornServer
from tests.deploy.files import api_container

LONG_POLLS = 200
STREAMS = 100


def _open(server: GunicornServer, target: str, accept: str) -> socket.socket:
    """A client that sends its request and then only waits."""
    sock = socket.create_connection((server.host, server.port), timeout=10)
    request = f"GET {target} HTTP/1.1\r\nHost: t13\r\nAccept: {accept}\r\n\r\n"
    sock.sendall(request.encode())
    return sock


def _followers(server: GunicornServer) -> float:
    text = requests.get(server.url + "/metrics", timeout=10).text
    return sum(float(v) for v in re.findall(r"^t13_event_followers\{[^}]*\} (\S+)$", text, re.M))


def test_probes_answer_in_time_while_hundreds_of_clients_wait(
    gunicorn: Any, redis_client: Any, redis_url: str
) -> None:
    server: GunicornServer = gunicorn({"REDIS_URL": redis_url, "WEB_CONCURRENCY": "1"})
    players = {"players": [{"name": "a"}, {"name": "b"}]}
    created = requests.post(server.url + "/v1/games", json=players, timeout=10)
    game = f"/v1/games/{created.json()['id']}/events"
    last = requests.get(server.url + game, timeout=10).json()["last_seq"]
    waiting: list[socket.socket] = []
    try:
        for _ in range(LONG_POLLS):
            waiting.append(_open(server, f"{game}?after={last}&wait=30", "application/json"))
        for _ in range(STREAMS):
            waiting.append(_open(server, game, "text/event-stream"))
        deadline = time.monotonic() + 20
        while _followers(server) < LONG_POLLS + STREAMS:
            assert time.monotonic() < deadline, f"{_followers(server)} clients waiting"
            time.sleep(0.1)
        container = api_container()
        for path, probe in (("/healthz", "livenessProbe"), ("/readyz", "readinessProbe")):
            timeout = container[probe]["timeoutSeconds"]
            for _ in range(5):
                started = time.monotonic()
                answer = requests.get(server.url + path, timeout=timeout)
                elapsed = time.monotonic() - started
                assert answer.status_code == 200 and elapsed < timeout, (path, elapsed)
        assert _followers(server) == LONG_POLLS + STREAMS  # all still waiting
    finally:
        for sock in waiting:
            with contextlib.suppress(OSError):
                sock.close()
