"""``make run``: gunicorn on the embedded store runs a delivery worker in its own
process (gevent), so a game's webhook is called with no other process running."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import requests
from standardwebhooks.webhooks import Webhook

from harness.gunicorn_server import GunicornServer
from harness.live_game import LiveGame
from harness.webhook_receiver import WebhookReceiver


def test_the_embedded_store_delivers_in_process(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer], receiver: WebhookReceiver
):
    server = gunicorn({"WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_ALLOW_LOOPBACK": "true"})
    session = requests.Session()
    answer = session.post(
        server.url + "/v1/games",
        json={
            "players": [{"name": "ann"}, {"name": "bob"}],
            "webhook": {"url": receiver.url, "events": ["turn", "round_scored"]},
        },
        timeout=10,
    )
    assert answer.status_code == 201, answer.text
    created = answer.json()
    tokens = {p["seat"]: p["token"] for p in created["players"]}
    game = LiveGame(server.url, created["id"], tokens, session)
    while game.step():
        if any(r.json()["type"] == "round_scored" for r in receiver.delivered()):
            break
    assert receiver.wait_for(lambda got: any(b"round_scored" in r.body for r in got))
    signer = Webhook(created["webhook"]["secret"])
    bodies = [signer.verify(r.body, r.headers) for r in receiver.delivered()]
    assert bodies[0]["type"] == "turn" and bodies[0]["data"]["round"] == 1
    log = session.get(
        game.url("/webhook"),
        headers={"Authorization": f"Bearer {created['webhook']['token']}"},
        timeout=10,
    ).json()
    assert {a["outcome"] for a in log["attempts"]} == {"delivered"}
