"""Webhook tests: a real receiver on 127.0.0.1, the app and a delivery worker on the
test Redis, loopback and http allowed (as in development), retries and sweeps fast."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
import urllib3.util.connection
from flask import Flask
from flask.testing import FlaskClient

from harness.webhook_receiver import WebhookReceiver
from service.config import Config
from service.store import connect
from service.webhooks.worker import DeliveryWorker
from tests.api.conftest import make_app

HOOK_ENV = {
    "WEBHOOK_ALLOW_HTTP": "true",
    "WEBHOOK_ALLOW_LOOPBACK": "true",
    "WEBHOOK_SWEEP_SECONDS": "0.5",
    "WEBHOOK_CLAIM_SECONDS": "5",
    "WEBHOOK_TIMEOUT_SECONDS": "2",
}


@pytest.fixture(autouse=True)
def only_loopback_connections(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every connection a delivery opens, checked: any other than to loopback fails
    the test before it is made."""
    opened: list[str] = []
    connect_to = urllib3.util.connection.create_connection

    def guarded(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        host = address[0]
        assert host in ("127.0.0.1", "::1"), f"a delivery tried to connect to {host}"
        opened.append(host)
        return connect_to(address, *args, **kwargs)

    monkeypatch.setattr(urllib3.util.connection, "create_connection", guarded)
    return opened


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as running:
        yield running


@pytest.fixture
def hook_config(redis_url: str) -> Callable[..., Config]:
    def make(**overrides: str) -> Config:
        return Config.from_env({"REDIS_URL": redis_url, **HOOK_ENV, **overrides})

    return make


@pytest.fixture
def hook_app(redis_client: redis.Redis, redis_url: str) -> Flask:
    return make_app(redis_url, **HOOK_ENV)


@pytest.fixture
def hook_client(hook_app: Flask) -> FlaskClient:
    return hook_app.test_client()


@pytest.fixture
def start_worker(
    redis_client: redis.Redis, hook_config: Callable[..., Config]
) -> Iterator[Callable[..., DeliveryWorker]]:
    """``start_worker(**settings)``: a delivery worker in threads of this process; the
    test fails if it logged an error (a delivery left to be taken over by accident)."""
    errors: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = errors.append  # type: ignore[method-assign]
    logger = logging.getLogger("service.webhooks")  # the service's loggers do not propagate
    logger.addHandler(handler)
    started: list[DeliveryWorker] = []

    def start(**overrides: str) -> DeliveryWorker:
        config = hook_config(**overrides)
        worker = DeliveryWorker(connect(config), config).start()
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
    logger.removeHandler(handler)
    assert not [record.getMessage() for record in errors]
