"""Shared fixtures: a throwaway Redis for the whole session, a clean store per test, and
real gunicorn instances (``gunicorn(env)``), stopped by PID.

By default the session starts its own ``redis-server`` (found on PATH) on a free
127.0.0.1 port, flushes it before every test, and stops it by PID at the end.
No other Redis (such as the machine's own on 6379) is ever touched.

``TEST_REDIS_URL=redis://host:port/N`` uses an existing server instead.  Point it
at a database you can spare: before each test every key with the service's
prefix (``t13:*``) in that database is deleted (nothing else; never FLUSHDB).

Without ``redis-server`` and without ``TEST_REDIS_URL`` the tests that need Redis
are skipped with a message saying how to install it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from harness.events_request import EventsRequest
from harness.gunicorn_server import GunicornServer
from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from service.botplay.worker import BotWorker
from service.config import Config
from service.store import GameStore, connect
from service.store.keys import PREFIX
from tests.api.conftest import make_app


class _Target:
    def __init__(self, url: str, owned: bool) -> None:
        self.url = url
        self.owned = owned  # True only for a server this session started


@pytest.fixture(scope="session")
def _redis_target() -> Iterator[_Target]:
    url = os.environ.get("TEST_REDIS_URL", "").strip()
    if url:
        yield _Target(url, owned=False)
        return
    if redis_server_binary() is None:
        pytest.skip(INSTALL_HINT)
    server = RedisServer()
    server.start()
    try:
        yield _Target(server.url, owned=True)
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def redis_url(_redis_target: _Target) -> str:
    """URL of the test Redis (the session's own server, or TEST_REDIS_URL)."""
    return _redis_target.url


@pytest.fixture
def redis_client(_redis_target: _Target) -> Iterator[redis.Redis]:
    """A client of the test Redis, emptied of the service's keys before the test."""
    client = redis.Redis.from_url(_redis_target.url, socket_timeout=5, socket_connect_timeout=5)
    if _redis_target.owned:
        client.flushdb()
    else:
        batch = list(client.scan_iter(match=f"{PREFIX}:*", count=1000))
        for start in range(0, len(batch), 500):
            client.delete(*batch[start : start + 500])
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def config(redis_url: str) -> Config:
    """A Config pointing at the test Redis (everything else default)."""
    return Config.from_env({"REDIS_URL": redis_url})


@pytest.fixture
def store(redis_client: redis.Redis, config: Config) -> Iterator[GameStore]:
    """A GameStore on the (clean) test Redis, with the production client settings."""
    client = connect(config)
    try:
        yield GameStore(client, config=config)
    finally:
        client.close()


@pytest.fixture
def app(redis_client: redis.Redis, redis_url: str, bots_for: Callable[[Flask], BotWorker]) -> Flask:
    """The app on the (clean) test Redis, rate limits off (``make_app`` builds others),
    with a bot worker playing its due turns in threads of this process, as
    ``three-thirteen-bots`` does beside a server (stopped at the test's end)."""
    made = make_app(redis_url)
    bots_for(made)
    return made


@pytest.fixture
def bots_for() -> Iterator[Callable[..., BotWorker]]:
    """``bots_for(app)`` runs a bot worker on ``app``'s store in threads of this
    process (as ``three-thirteen-bots`` runs beside a server), until the test ends:
    woken by the writes' hints, with no sweeps (a test's Redis is its own) unless
    ``sweeps=True`` (a worker started after the writes it is to find)."""
    started: list[BotWorker] = []

    def start(app: Flask, *, sweeps: bool = False) -> BotWorker:
        services = app.extensions["t13"]
        started.append(BotWorker(services.store, services.config, sweeps=sweeps).start())
        return started[-1]

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


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


@pytest.fixture
def opened() -> Iterator[Callable[..., EventsRequest]]:
    """Opens events requests (:class:`~harness.events_request.EventsRequest`), all
    closed at the test's end."""
    made: list[EventsRequest] = []

    def open_(*args: Any, **kwargs: Any) -> EventsRequest:
        made.append(EventsRequest(*args, **kwargs))
        return made[-1]

    yield open_
    for each in made:
        each.close()
