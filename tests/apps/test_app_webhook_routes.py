"""``/v1/app/webhook/...``: an app's delivery log and redelivery, for its key only."""

from __future__ import annotations

from flask.testing import FlaskClient

from service.hosting import app_webhooks
from tests.apps.conftest import bearer, mint


def test_the_log_and_redelivery_need_the_apps_key(apps_client: FlaskClient, new_app, store):
    app = new_app("cards")
    answer = apps_client.get("/v1/app/webhook/deliveries", headers=app.auth)
    assert answer.status_code == 200
    assert answer.get_json() == {"webhook": None, "attempts": []}
    redeliver = "/v1/app/webhook/deliveries/msg_nope/redeliver"
    answer = apps_client.post(redeliver, headers=app.auth)
    assert answer.status_code == 404 and answer.get_json()["code"] == "WEBHOOK_NOT_FOUND"
    app_webhooks.set_webhook(
        store.apps,
        app.id,
        "https://hooks.example.com/t13",
        [],
        False,
        allow_http=False,
        allow_loopback=False,
    )
    shown = apps_client.get("/v1/app/webhook/deliveries", headers=app.auth).get_json()
    assert shown["webhook"]["url"] == "https://hooks.example.com/t13"
    assert "secret" not in shown["webhook"]
    answer = apps_client.post(redeliver, headers=app.auth)
    assert answer.status_code == 404 and answer.get_json()["code"] == "DELIVERY_NOT_FOUND"
    player = mint(apps_client, app, "u1", "ann")
    answer = apps_client.get("/v1/app/webhook/deliveries", headers=bearer(player))
    assert answer.status_code == 403 and answer.get_json()["code"] == "CREDENTIAL_NOT_ALLOWED"
    assert apps_client.get("/v1/app/webhook/deliveries").status_code == 401


def test_open_mode_has_no_apps(client: FlaskClient):
    answer = client.get("/v1/app/webhook/deliveries")
    assert answer.status_code == 404
