"""Apps mode on the test Redis: an app (``AUTH_MODE=apps``) and its helpers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.hosting import apps
from service.store import GameStore
from tests.api.conftest import make_app


@dataclass
class AppKey:
    """An app made with the operator's functions, and its secret key."""

    id: str
    key: str

    @property
    def auth(self) -> dict[str, str]:
        return bearer(self.key)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def apps_app(redis_client: Any, redis_url: str) -> Flask:
    """The service in apps mode on the clean test Redis (rate limits off)."""
    return make_app(redis_url, AUTH_MODE="apps")


@pytest.fixture
def apps_client(apps_app: Flask) -> FlaskClient:
    return apps_app.test_client()


@pytest.fixture
def new_app(store: GameStore) -> Callable[[str], AppKey]:
    """Makes an app (as ``three-thirteen-admin apps create`` does)."""

    def make(name: str) -> AppKey:
        app, key = apps.create_app_record(store.apps, name)
        return AppKey(app.id, key)

    return make


def mint(client: FlaskClient, app: AppKey, player_id: str, name: str, **body: Any) -> str:
    """A player token for ``player_id`` of ``app``, minted over HTTP."""
    answer = client.post(
        f"/v1/players/{player_id}/tokens", json={"name": name, **body}, headers=app.auth
    )
    assert answer.status_code == 201, answer.get_json()
    token: str = answer.get_json()["token"]
    return token


def two_player_game(client: FlaskClient, app: AppKey, **extra: Any) -> dict[str, Any]:
    """A game the app's backend creates for its players ``u1`` (ann) and ``u2`` (bob)."""
    body = {
        "players": [{"name": "ann", "player_id": "u1"}, {"name": "bob", "player_id": "u2"}],
        **extra,
    }
    answer = client.post("/v1/games", json=body, headers=app.auth)
    assert answer.status_code == 201, answer.get_json()
    created: dict[str, Any] = answer.get_json()
    return created
