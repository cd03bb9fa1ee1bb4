"""A live service for the HTTP bot client: a real gunicorn on the test Redis."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.gunicorn_server import GunicornServer
from service.bots import expert


@pytest.fixture
def few_expert_samples() -> Iterator[None]:
    """The expert level with 4 samples a decision: its code paths all run (a sample
    count changes how well it plays, not what it may see or play), at a tenth of
    the cost, for the tests that play many positions with every level."""
    before = expert.samples()
    expert.use_samples(4)
    try:
        yield
    finally:
        expert.use_samples(before)


@pytest.fixture
def served(redis_url: str, redis_client: object) -> Iterator[GunicornServer]:
    """The service under a real gunicorn (seeded games allowed), heartbeats every half second."""
    with GunicornServer({"REDIS_URL": redis_url, "SSE_HEARTBEAT_SECONDS": "0.5"}) as server:
        yield server


@pytest.fixture
def live_url(served: GunicornServer) -> str:
    """Base URL of the served service."""
    return served.url
