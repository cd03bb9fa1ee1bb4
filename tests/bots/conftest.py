"""A live service for the HTTP bot client: a real gunicorn on the test Redis."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.gunicorn_server import GunicornServer


@pytest.fixture
def served(redis_url: str, redis_client: object) -> Iterator[GunicornServer]:
    """The service under a real gunicorn (seeded games allowed), heartbeats every half second."""
    with GunicornServer({"REDIS_URL": redis_url, "SSE_HEARTBEAT_SECONDS": "0.5"}) as server:
        yield server


@pytest.fixture
def live_url(served: GunicornServer) -> str:
    """Base URL of the served service."""
    return served.url
