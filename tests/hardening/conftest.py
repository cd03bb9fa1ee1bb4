"""Fixtures of the hardening tests: games created through the API (on the ``client``
of tests/conftest.py), raw snapshots of a game in Redis, and an app on either lane
(``lane_client``: the fast lane and Flask)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from service.store.keys import EVENTS, STATE, key
from tests.api.conftest import Game, create_game, make_app


def snapshot(client: redis.Redis, game_id: str) -> tuple[Any, ...]:
    """Everything stored about a game: its state hash and its whole event stream."""
    return (
        client.hgetall(key(game_id, STATE)),
        client.xrange(key(game_id, EVENTS)),
    )


@pytest.fixture
def make_game(client: FlaskClient) -> Callable[..., Game]:
    def make(n: int = 2, seed: str = "hardening", **body: Any) -> Game:
        return create_game(client, [{"name": f"p{i}"} for i in range(n)], seed=seed, **body)

    return make


CARD_IN_TEXT = re.compile(r"\b(?:10|[2-9AJQK])[CDHS]\b|\bJK\b")


def card_codes(value: Any) -> set[str]:
    """Every card code (``7H``, ``10S``, ``JK``) written in a JSON value: whole strings
    and words of texts (a ``reason`` or ``detail`` quoting cards)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for item in value.values():
            found |= card_codes(item)
    elif isinstance(value, list):
        for item in value:
            found |= card_codes(item)
    elif isinstance(value, str):
        found.update(CARD_IN_TEXT.findall(value))
    return found


@pytest.fixture(params=["true", "false"], ids=["fast-lane", "flask"])
def lane_client(request: Any, redis_client: Any, redis_url: str) -> FlaskClient:
    return make_app(redis_url, FAST_LANE=request.param).test_client()
