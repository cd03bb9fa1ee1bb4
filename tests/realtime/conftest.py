"""Fixtures for tests of the running service: real gunicorn processes, stopped by PID."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import pytest

from harness.gunicorn_server import GunicornServer


@pytest.fixture
def gunicorn() -> Iterator[Callable[[Mapping[str, str]], GunicornServer]]:
    """Start gunicorn instances with ``gunicorn(env)``; all are stopped (by PID) afterwards."""
    started: list[GunicornServer] = []

    def start(env: Mapping[str, str]) -> GunicornServer:
        server = GunicornServer(env)
        started.append(server)
        return server.start()

    try:
        yield start
    finally:
        for server in started:
            server.cleanup()
