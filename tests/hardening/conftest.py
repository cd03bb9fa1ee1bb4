"""Fixtures of the hardening tests: the app on the test Redis (rate limits off unless
asked), games created through the API, and raw snapshots of a game in Redis."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Config
from service.store import GameStore, connect
from service.store.keys import EVENTS, STATE, key
from tests.api.conftest import Game, create_game


def hardened_app(redis_url: str | None, **overrides: str) -> Flask:
    env = {"ALLOW_SEEDED_GAMES": "true", "RATE_LIMITS": "false", **overrides}
    if redis_url is not None:
        env["REDIS_URL"] = redis_url
    config = Config.from_env(env)
    app = create_app(config, GameStore(connect(config), config=config))
    app.testing = True
    return app


def snapshot(client: redis.Redis, game_id: str) -> tuple[Any, ...]:
    """Everything stored about a game: its state hash and its whole event stream."""
    return (
        client.hgetall(key(game_id, STATE)),
        client.xrange(key(game_id, EVENTS)),
    )


@pytest.fixture
def app(redis_client: redis.Redis, redis_url: str) -> Flask:
    return hardened_app(redis_url)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def make_game(client: FlaskClient) -> Callable[..., Game]:
    def make(n: int = 2, seed: str = "hardening", **body: Any) -> Game:
        return create_game(client, [{"name": f"p{i}"} for i in range(n)], seed=seed, **body)

    return make


def card_codes(value: Any) -> set[str]:
    """Every string inside a JSON value that is a card code (``7H``, ``10S``, ``JK``)."""
    from service.engine.cards import Card
    from service.engine.errors import MalformedError

    found: set[str] = set()
    if isinstance(value, dict):
        for item in value.values():
            found |= card_codes(item)
    elif isinstance(value, list):
        for item in value:
            found |= card_codes(item)
    elif isinstance(value, str) and 2 <= len(value) <= 3:
        try:
            if Card.parse(value).code == value:
                found.add(value)
        except (MalformedError, ValueError):
            pass
    return found
