"""Deliveries end to end: the app and a delivery worker on the test Redis, a real
receiver on 127.0.0.1, every signature checked with the Standard Webhooks library."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from flask.testing import FlaskClient
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from harness.live_game import choose
from harness.webhook_receiver import Received, WebhookReceiver
from service.webhooks.worker import DeliveryWorker

PLAYERS = [{"name": "ann"}, {"name": "bob"}]


def create(client: FlaskClient, url: str, **webhook: Any) -> dict[str, Any]:
    answer = client.post(
        "/v1/games",
        json={
            "players": PLAYERS,
            "options": {"max_turns_per_round": 6},
            "webhook": {"url": url, **webhook},
        },
    )
    assert answer.status_code == 201, answer.get_json()
    return dict(answer.get_json())


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def play(client: FlaskClient, created: dict[str, Any], moves: int | None = None) -> None:
    """Play the game's human seats (all of them) with :func:`choose`, to the end or for
    ``moves`` moves."""
    tokens = {p["seat"]: p["token"] for p in created["players"]}
    game = f"/v1/games/{created['id']}"
    played = 0
    while moves is None or played < moves:
        public = client.get(game).get_json()
        if public["status"] != "playing":
            return
        seat = public["round"]["turn"]
        view = client.get(game + "/view", headers=auth(tokens[seat])).get_json()
        answer = client.post(game + "/moves", json=choose(view), headers=auth(tokens[seat]))
        assert answer.status_code == 200, answer.get_json()
        played += 1


def expected_turns(client: FlaskClient, game_id: str) -> list[tuple[int, int]]:
    """``(seq, seat)`` of every ``turn`` event of the game's event log, having checked
    that every turn has one: in each round, the seats of its ``turn`` events are the
    seats that drew (a turn begins with a draw), the first being the round's
    ``round_started.turn``; only the round in play may have a turn not drawn yet."""
    events = client.get(f"/v1/games/{game_id}/events?after=0").get_json()["events"]
    rounds: list[tuple[int, list[int], list[int]]] = []  # (first turn, turns, draws)
    turns = []
    for event in events:
        if event["type"] == "round_started":
            rounds.append((event["turn"], [], []))
        elif event["type"] == "turn":
            rounds[-1][1].append(event["seat"])
            turns.append((event["seq"], event["seat"]))
        elif event["type"] == "drew":
            rounds[-1][2].append(event["seat"])
    assert rounds
    for index, (first, told, drew) in enumerate(rounds):
        in_play = index == len(rounds) - 1 and events[-1]["type"] != "game_finished"
        assert told[0] == first and told[: len(drew)] == drew
        assert len(told) - len(drew) == (1 if in_play else 0)
    return turns


def verified(created: dict[str, Any], received: list[Received]) -> list[dict[str, Any]]:
    """The bodies of ``received``, each signature checked (raises if one is wrong)."""
    signer = Webhook(created["webhook"]["secret"])
    return [signer.verify(r.body, r.headers) for r in received]


def test_every_turn_of_a_full_game_in_order_signed_with_its_events_seq(
    hook_client: FlaskClient, receiver: WebhookReceiver, start_worker: Callable[..., DeliveryWorker]
):
    start_worker()
    created = create(hook_client, receiver.url)
    assert created["webhook"]["secret"].startswith("whsec_")
    assert created["webhook"]["events"] == [
        "turn",
        "seat_joined",
        "game_started",
        "round_scored",
        "game_finished",
    ]
    play(hook_client, created)
    game_id = created["id"]
    assert receiver.wait_for(lambda got: any(b"game_finished" in r.body for r in got))
    bodies = verified(created, receiver.delivered())
    turns = [(b["seq"], b["data"]["seat"]) for b in bodies if b["type"] == "turn"]
    assert turns == expected_turns(hook_client, game_id)
    assert len(turns) > 20
    seqs = [b["seq"] for b in bodies]
    assert seqs == sorted(seqs) and len(set(b["id"] for b in bodies)) == len(bodies)
    kinds = [b["type"] for b in bodies]
    assert kinds[:3] == ["seat_joined", "seat_joined", "game_started"]
    assert kinds[-2:] == ["round_scored", "game_finished"]
    assert kinds.count("round_scored") == 11
    assert all(b["game_id"] == game_id for b in bodies)
    # nothing private: no token, no secret, no hand in any body
    secrets = [p["token"] for p in created["players"]] + [
        created["webhook"]["secret"],
        created["webhook"]["token"],
    ]
    for received in receiver.delivered():
        assert not any(s.encode() in received.body for s in secrets)
        assert b'"hand"' not in received.body
    # the log lists each delivery once, delivered at its first attempt (logged once
    # its answer is back)
    deadline = time.monotonic() + 10
    while True:
        log = hook_client.get(
            f"/v1/games/{game_id}/webhook", headers=auth(created["webhook"]["token"])
        ).get_json()
        if len(log["attempts"]) >= min(len(bodies), 200) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert log["url"] == receiver.url
    assert [a["delivery_id"] for a in log["attempts"]] == [b["id"] for b in bodies][-200:]
    assert {(a["outcome"], a["attempt"], a["status"]) for a in log["attempts"]} == {
        ("delivered", 1, 204)
    }


def test_a_forged_or_replayed_delivery_fails_verification(
    hook_client: FlaskClient, receiver: WebhookReceiver, start_worker: Callable[..., DeliveryWorker]
):
    start_worker()
    created = create(hook_client, receiver.url, events=["seat_joined"])
    assert receiver.wait_for(lambda got: len(got) == 2)
    first = receiver.delivered()[0]
    signer = Webhook(created["webhook"]["secret"])
    with pytest.raises(WebhookVerificationError):
        signer.verify(first.body.replace(b"ann", b"eve"), first.headers)
    old = {**first.headers, "webhook-timestamp": str(int(first.headers["webhook-timestamp"]) - 600)}
    with pytest.raises(WebhookVerificationError):
        signer.verify(first.body, old)  # the signature covers the timestamp: too old


def test_only_the_events_asked_for(
    hook_client: FlaskClient, receiver: WebhookReceiver, start_worker: Callable[..., DeliveryWorker]
):
    start_worker()
    created = create(hook_client, receiver.url, events=["round_scored"])
    assert created["webhook"]["events"] == ["round_scored"]
    play(hook_client, created, moves=30)
    assert receiver.wait_for(lambda got: len(got) >= 1)
    assert {r.json()["type"] for r in receiver.delivered()} == {"round_scored"}


def test_receiver_down_for_a_while(
    hook_client: FlaskClient, receiver: WebhookReceiver, start_worker: Callable[..., DeliveryWorker]
):
    """Attempts fail (503) and are retried with backoff; once the receiver answers again
    every delivery is made, under the same id."""
    start_worker()
    receiver.status = 503
    created = create(hook_client, receiver.url)
    play(hook_client, created, moves=4)
    assert receiver.wait_for(lambda got: True)
    token = created["webhook"]["token"]
    log_url = f"/v1/games/{created['id']}/webhook"

    def attempts() -> list[dict[str, Any]]:
        return list(hook_client.get(log_url, headers=auth(token)).get_json()["attempts"])

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not any(a["attempt"] >= 3 for a in attempts()):
        time.sleep(0.2)
    failed = attempts()
    assert any(a["attempt"] >= 3 for a in failed), failed
    assert {a["outcome"] for a in failed} == {"retrying"}
    assert all(a["status"] == 503 and a["next_attempt_at"] > a["at"] for a in failed)
    queued = {a["delivery_id"] for a in failed}
    receiver.status = 204
    assert receiver.wait_for(lambda got: {r.json()["id"] for r in got} >= queued, timeout=30)
    verified(created, receiver.delivered())

    def delivered() -> list[dict[str, Any]]:
        return [a for a in attempts() if a["outcome"] == "delivered"]

    deadline = time.monotonic() + 10  # each is logged once its answer is back
    while time.monotonic() < deadline and not {a["delivery_id"] for a in delivered()} >= queued:
        time.sleep(0.1)
    assert {a["delivery_id"] for a in delivered()} >= queued
    assert all(a["attempt"] >= 2 for a in delivered() if a["delivery_id"] in queued)


def test_recorded_failed_after_the_retry_time(
    hook_client: FlaskClient, receiver: WebhookReceiver, start_worker: Callable[..., DeliveryWorker]
):
    start_worker(WEBHOOK_RETRY_SECONDS="5")
    receiver.status = 500
    created = create(hook_client, receiver.url, events=["game_started"])
    token = created["webhook"]["token"]
    deadline = time.monotonic() + 30
    attempts: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        attempts = hook_client.get(
            f"/v1/games/{created['id']}/webhook", headers=auth(token)
        ).get_json()["attempts"]
        if attempts and attempts[-1]["outcome"] == "failed":
            break
        time.sleep(0.2)
    assert attempts[-1]["outcome"] == "failed" and attempts[-1]["next_attempt_at"] is None
    assert len(attempts) >= 2 and {a["outcome"] for a in attempts[:-1]} == {"retrying"}
    assert len({a["delivery_id"] for a in attempts}) == 1
    count = len(receiver.received)
    time.sleep(1.5)
    assert len(receiver.received) == count  # no attempt after the last


def test_the_log_needs_the_webhook_token(hook_client: FlaskClient, receiver: WebhookReceiver):
    created = create(hook_client, receiver.url)
    url = f"/v1/games/{created['id']}/webhook"
    assert hook_client.get(url).status_code == 401
    seat = hook_client.get(url, headers=auth(created["players"][0]["token"]))
    assert seat.status_code == 401 and seat.get_json()["code"] == "UNAUTHORIZED"
    assert hook_client.get(url, headers=auth(created["webhook"]["token"])).status_code == 200
    plain = hook_client.post("/v1/games", json={"players": PLAYERS}).get_json()
    assert "webhook" not in plain
    none = hook_client.get(f"/v1/games/{plain['id']}/webhook", headers=auth("x" * 43))
    assert none.status_code == 404 and none.get_json()["code"] == "WEBHOOK_NOT_FOUND"
    assert hook_client.get("/v1/games/nope/webhook", headers=auth("x")).status_code == 404
    # the public view and the seats' views say nothing of the webhook
    for path, headers in [("", {}), ("/view", auth(created["players"][0]["token"]))]:
        text = hook_client.get(f"/v1/games/{created['id']}{path}", headers=headers).data
        assert b"whsec_" not in text and b"hooks" not in text


@pytest.mark.parametrize(
    ("webhook", "code"),
    [
        ({"url": "http://hooks.example.com/"}, "WEBHOOK_URL_REFUSED"),
        ({"url": "https://10.0.0.1/"}, "WEBHOOK_URL_REFUSED"),
        ({"url": "https://169.254.169.254/"}, "WEBHOOK_URL_REFUSED"),
        ({"url": "https://127.0.0.1/"}, "WEBHOOK_URL_REFUSED"),
        ({"url": "https://[::1]:8443/"}, "WEBHOOK_URL_REFUSED"),
        ({"url": "https://hooks.example.com/", "events": ["moved"]}, "VALIDATION_ERROR"),
        ({"url": "https://hooks.example.com/", "events": []}, "VALIDATION_ERROR"),
        ({"url": ""}, "VALIDATION_ERROR"),
        ({"events": ["turn"]}, "VALIDATION_ERROR"),
    ],
)
def test_refused_at_creation(client: FlaskClient, webhook: dict[str, Any], code: str):
    """With the shipped settings (https only, no loopback): a clear 422, no game."""
    answer = client.post("/v1/games", json={"players": PLAYERS, "webhook": webhook})
    assert answer.status_code == 422, answer.get_json()
    problem = answer.get_json()
    assert problem["code"] == code
    assert "webhook" in orjson.dumps(problem["errors"]).decode()


def test_accepted_with_the_shipped_settings(client: FlaskClient):
    answer = client.post(
        "/v1/games",
        json={"players": PLAYERS, "webhook": {"url": "https://hooks.example.com/t13?k=1"}},
    )
    assert answer.status_code == 201
    assert answer.get_json()["webhook"]["url"] == "https://hooks.example.com/t13?k=1"


def test_the_docs_receiver_snippet_verifies_real_deliveries(
    hook_client: FlaskClient, receiver: WebhookReceiver, start_worker: Callable[..., DeliveryWorker]
):
    """docs/WEBHOOKS.md's stdlib-only ``verify`` accepts what the service sends and
    refuses a changed body, another secret and an old timestamp."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "WEBHOOKS.md").read_text()
    snippet = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert snippet is not None
    scope: dict[str, Any] = {}
    exec(snippet.group(1), scope)  # noqa: S102 (our own documentation)
    verify = scope["verify"]
    start_worker()
    created = create(hook_client, receiver.url, events=["seat_joined"])
    assert receiver.wait_for(lambda got: len(got) == 2)
    secret = created["webhook"]["secret"]
    for received in receiver.delivered():
        assert verify(secret, received.headers, received.body) == received.json()
    first = receiver.delivered()[0]
    with pytest.raises(ValueError, match="bad signature"):
        verify(secret, first.headers, first.body + b" ")
    with pytest.raises(ValueError, match="bad signature"):
        verify("whsec_" + "A" * 44, first.headers, first.body)
    old = {**first.headers, "webhook-timestamp": str(int(time.time()) - 3600)}
    with pytest.raises(ValueError, match="replay"):
        verify(secret, old, first.body)


def test_a_keyed_create_replays_the_webhook_and_redis_holds_no_usable_token(
    hook_client: FlaskClient, receiver: WebhookReceiver, redis_client: Any
):
    key = {"Idempotency-Key": "0f8fad5b-d9cb-469f-a165-70867728950e"}
    body = {"players": PLAYERS, "webhook": {"url": receiver.url}}
    first = hook_client.post("/v1/games", json=body, headers=key)
    again = hook_client.post("/v1/games", json=body, headers=key)
    assert first.status_code == again.status_code == 201
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.get_json()["webhook"] == first.get_json()["webhook"]
    token = first.get_json()["webhook"]["token"].encode()
    for name in redis_client.scan_iter("t13:*"):
        if redis_client.type(name) == b"hash":
            assert not any(token in v for v in redis_client.hvals(name))
