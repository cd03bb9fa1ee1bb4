"""What the benchmark's two floors (``bench/move_floor.py``, ``bench/engine_floor.py``)
share: the moves path, a store made from ``REDIS_URL``, the start-up check's answer
and a move answer's headers as the service sends them."""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterable

from service.api.middleware import API_CSP, SECURITY_HEADERS, StartResponse
from service.config import Config
from service.hosting.tokens import GAME_ID_PATTERN
from service.store import GameStore

MOVES_PATH = re.compile(rf"/v1/games/({GAME_ID_PATTERN})/moves")


def store_from_env(app: str) -> GameStore:
    """The store of ``REDIS_URL``, which a floor cannot run without."""
    if os.environ.get("REDIS_URL") is None:
        raise RuntimeError(f"{app} needs REDIS_URL (a Redis holding the benchmark's games)")
    return GameStore(config=Config.from_env())


def healthy(start_response: StartResponse) -> Iterable[bytes]:
    """Any path but a move's: the answer to the benchmark's start-up check (/healthz)."""
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "2")])
    return [b"{}"]


def move_headers(length: int, version: int) -> list[tuple[str, str]]:
    """A move answer's headers, as the service sends them (its middleware's included)."""
    return [
        ("Content-Type", "application/json"),
        ("Content-Length", str(length)),
        ("ETag", f'"{version}"'),
        ("X-Request-ID", f"{random.getrandbits(128):032x}"),
        *SECURITY_HEADERS,
        API_CSP,
    ]
