"""A live service for the HTTP bot client: the app served by werkzeug in a thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from werkzeug.serving import make_server

from service.app import create_app
from service.config import Config


@pytest.fixture
def live_url(redis_url: str, redis_client: object) -> Iterator[str]:
    """Base URL of the app on 127.0.0.1 (a free port), seeded games allowed."""
    config = Config(redis_url=redis_url, allow_seeded_games=True, rate_limits_enabled=False)
    app = create_app(config)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
