"""An app's webhook is told of its games however they were made: quick-join and
rematch, each seat with its player (the app in process, a real worker and receiver)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient
from standardwebhooks.webhooks import Webhook

from harness.live_game import choose
from harness.webhook_receiver import WebhookReceiver
from service.hosting import app_webhooks, apps
from service.store import GameStore
from service.webhooks.worker import DeliveryWorker
from tests.api.conftest import make_app
from tests.webhooks.conftest import HOOK_ENV


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def apps_hook_client(redis_client: Any, redis_url: str) -> FlaskClient:
    return make_app(redis_url, AUTH_MODE="apps", **HOOK_ENV).test_client()


def test_quick_join_and_rematch_are_told_with_each_seats_player(
    apps_hook_client: FlaskClient,
    store: GameStore,
    receiver: WebhookReceiver,
    start_worker: Callable[..., DeliveryWorker],
):
    client = apps_hook_client
    app, key = apps.create_app_record(store.apps, "cards")
    _app, hook = app_webhooks.set_webhook(
        store.apps, app.id, receiver.url, [], False, allow_http=True, allow_loopback=True
    )
    start_worker()
    tokens = {}
    for pid in ("u1", "u2"):
        minted = client.post(f"/v1/players/{pid}/tokens", json={"name": pid}, headers=bearer(key))
        tokens[pid] = minted.get_json()["token"]
    game_id = ""
    for pid in ("u1", "u2"):
        answer = client.post(
            "/v1/lobby/quick-join",
            json={"name": pid, "seats": 2, "options": {"max_turns_per_round": 1}},
            headers=bearer(tokens[pid]),
        )
        assert answer.status_code == 201, answer.get_json()
        game_id = answer.get_json()["id"]
    game = f"/v1/games/{game_id}"
    while (public := client.get(game, headers=bearer(tokens["u1"])).get_json())["status"] == (
        "playing"
    ):
        token = tokens["u1" if public["round"]["turn"] == 0 else "u2"]
        view = client.get(game + "/view", headers=bearer(token)).get_json()
        assert (
            client.post(game + "/moves", json=choose(view), headers=bearer(token)).status_code
            == 200
        )
    answer = client.post(game + "/rematch", headers=bearer(tokens["u2"]))
    assert answer.status_code == 201, answer.get_json()
    rematch = answer.get_json()["id"]
    assert receiver.wait_for(
        lambda got: any(
            r.json()["game_id"] == rematch and r.json()["type"] == "player_joined" for r in got
        )
    )
    signer = Webhook(hook.secret)
    bodies = [signer.verify(r.body, r.headers) for r in receiver.delivered()]
    first = [b for b in bodies if b["game_id"] == game_id and b["type"] != "turn"]
    assert [(b["type"], b["data"].get("player_id")) for b in first] == [
        ("game_created", None),
        ("player_joined", "u1"),
        ("player_joined", "u2"),
        ("game_started", None),
        ("game_finished", None),
    ]
    assert [p["player_id"] for p in first[-1]["data"]["players"]] == ["u1", "u2"]
    again = [b for b in bodies if b["game_id"] == rematch]
    assert [b["type"] for b in again] == ["game_created", "player_joined"]
    assert again[0]["data"]["rematch_of"] == game_id
    assert [p["player_id"] for p in again[0]["data"]["players"]] == ["u1", "u2"]
    assert again[1]["data"]["player_id"] == "u2"
