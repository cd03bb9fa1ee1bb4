"""Lifecycle webhooks per app, end to end: two gunicorn instances in apps mode on the
test Redis, the apps and their webhooks made with the operator's command, a real
delivery worker and receivers on 127.0.0.1; every signature checked with the
Standard Webhooks library."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import requests
from standardwebhooks.webhooks import Webhook

from harness.live_game import choose
from harness.webhook_receiver import Received, WebhookReceiver
from service.webhooks.worker import DeliveryWorker
from tests.apps.test_two_instances import admin
from tests.webhooks.conftest import HOOK_ENV

EVERY_EVENT = {
    "game_created",
    "player_joined",
    "game_started",
    "turn",
    "player_left",
    "player_resigned",
    "game_finished",
    "game_cancelled",
}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def call(method: str, url: str, token: str, status: int, **kwargs: Any) -> Any:
    answer = requests.request(method, url, headers=bearer(token), timeout=10, **kwargs)
    assert answer.status_code == status, answer.text
    return answer.json() if answer.content else None


def play_to_the_end(servers: list[str], game_id: str, tokens: dict[str, str]) -> None:
    """Play every move with the players' tokens, each move on the next instance."""
    moves = 0
    while True:
        base = servers[moves % 2]
        public = requests.get(
            f"{base}/v1/games/{game_id}", headers=bearer(tokens["u1"]), timeout=10
        )
        state = public.json()
        if state["status"] != "playing":
            assert state["status"] == "finished", state
            return
        token = tokens["u1" if state["round"]["turn"] == 0 else "u2"]
        view = call("GET", f"{base}/v1/games/{game_id}/view", token, 200)
        call("POST", f"{base}/v1/games/{game_id}/moves", token, 200, json=choose(view))
        moves += 1


def by_id(received: list[Received]) -> Counter[str]:
    return Counter(r.headers["webhook-id"] for r in received)


def test_the_apps_receiver_gets_every_lifecycle_event_of_its_games_signed_once_per_id(
    redis_client, redis_url, gunicorn, start_worker: Callable[..., DeliveryWorker]
):
    env = {"REDIS_URL": redis_url, "AUTH_MODE": "apps", **HOOK_ENV}
    servers = [gunicorn(env).url, gunicorn(env).url]
    one, two = servers
    with WebhookReceiver() as receiver, WebhookReceiver() as other_receiver:
        made = admin(redis_url, "apps", "create", "cards")
        other = admin(redis_url, "apps", "create", "other")
        hook = admin(redis_url, "apps", "webhook", made["id"], "--url", receiver.url, env=HOOK_ENV)
        assert hook["webhook"]["secret"].startswith("whsec_")
        assert set(hook["webhook"]["events"]) >= EVERY_EVENT
        admin(redis_url, "apps", "webhook", other["id"], "--url", other_receiver.url, env=HOOK_ENV)
        listed = admin(redis_url, "apps", "list")["apps"]
        assert hook["webhook"]["secret"] not in str(listed)  # shown once, never listed
        start_worker()
        key = made["key"]
        tokens = {
            pid: call("POST", f"{two}/v1/players/{pid}/tokens", key, 201, json={"name": pid})[
                "token"
            ]
            for pid in ("u1", "u2", "u3")
        }
        # the app's backend makes a game for two of its players, on one instance...
        created = call(
            "POST",
            f"{one}/v1/games",
            key,
            201,
            json={
                "players": [{"name": "ann", "player_id": "u1"}, {"name": "bob", "player_id": "u2"}],
                "options": {"max_turns_per_round": 2},
            },
        )
        game_id = created["id"]
        # ...its players play it to the end on both
        play_to_the_end(servers, game_id, tokens)
        # a game a player joins and leaves, then its last player leaves: cancelled
        waiting = call(
            "POST",
            f"{two}/v1/games",
            key,
            201,
            json={"players": [{"name": "ann", "player_id": "u1"}], "seats": 3},
        )["id"]
        call("POST", f"{one}/v1/games/{waiting}/players", tokens["u3"], 201, json={"name": "cy"})
        call("DELETE", f"{two}/v1/games/{waiting}/seat", tokens["u3"], 200)
        call("DELETE", f"{one}/v1/games/{waiting}/seat", tokens["u1"], 200)
        # a game where a player resigns
        resigned = call(
            "POST",
            f"{one}/v1/games",
            key,
            201,
            json={
                "players": [{"name": "ann", "player_id": "u1"}, {"name": "cy", "player_id": "u3"}]
            },
        )["id"]
        call("POST", f"{two}/v1/games/{resigned}/resign", tokens["u3"], 200)

        def all_told(got: list[Received]) -> bool:
            return {r.json()["type"] for r in got} >= EVERY_EVENT and any(
                r.json()["type"] == "player_resigned" for r in got
            )

        assert receiver.wait_for(all_told)
        time.sleep(0.5)  # anything more would come now: nothing does (checked below)
        received = receiver.delivered()
        signer = Webhook(hook["webhook"]["secret"])
        bodies = [signer.verify(r.body, r.headers) for r in received]
        # once per delivery id, and one delivery per event of a game
        assert set(by_id(received).values()) == {1}
        told = Counter((b["game_id"], b["seq"]) for b in bodies)
        assert set(told.values()) == {1}
        assert {b["type"] for b in bodies} == EVERY_EVENT
        # the game played: each event of its log the app is told, in order of seq
        played = [b for b in bodies if b["game_id"] == game_id]
        events = call("GET", f"{two}/v1/games/{game_id}/events?after=0", tokens["u1"], 200)[
            "events"
        ]
        expected = [
            (e["seq"], e["type"])
            for e in events
            if e["type"] in ("game_created", "player_joined", "game_started", "game_finished")
            or e["type"] == "turn"
        ]
        assert sorted((b["seq"], b["type"]) for b in played) == expected
        turns = [b["data"] for b in played if b["type"] == "turn"]
        assert len(turns) > 20
        assert all(t["player_id"] == ("u1", "u2")[t["seat"]] for t in turns)
        finished = next(b["data"] for b in played if b["type"] == "game_finished")
        assert [p["player_id"] for p in finished["players"]] == ["u1", "u2"]
        assert finished["winners"] and len(finished["totals"]) == 2
        joined = [b["data"]["player_id"] for b in played if b["type"] == "player_joined"]
        assert joined == ["u1", "u2"]
        # the game joined and left
        left = [b for b in bodies if b["game_id"] == waiting]
        assert [(b["type"], b["data"].get("player_id")) for b in left] == [
            ("game_created", None),
            ("player_joined", "u1"),
            ("player_joined", "u3"),
            ("player_left", "u3"),
            ("player_left", "u1"),
            ("game_cancelled", None),
        ]
        resign = next(b for b in bodies if b["type"] == "player_resigned")
        assert resign["game_id"] == resigned and resign["data"]["player_id"] == "u3"
        # nothing secret in any body
        for r in received:
            for secret in [key, hook["webhook"]["secret"], *tokens.values()]:
                assert secret.encode() not in r.body
            assert b'"hand"' not in r.body
        # the other app's receiver got nothing of it
        assert other_receiver.delivered() == []

        # the delivery log, for the app's backend, on either instance
        log: dict[str, Any] = {}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            log = call("GET", f"{two}/v1/app/webhook/deliveries", key, 200)
            if len(log["attempts"]) >= min(len(bodies), 200):
                break
            time.sleep(0.1)
        assert log["webhook"] == {
            "url": receiver.url,
            "events": hook["webhook"]["events"],
            "turn_only": "always",
        }
        assert [a["delivery_id"] for a in log["attempts"]] == [b["id"] for b in bodies][-200:]
        assert {(a["outcome"], a["attempt"]) for a in log["attempts"]} == {("delivered", 1)}
        assert "body" not in log["attempts"][0]
        assert call("GET", f"{one}/v1/app/webhook/deliveries", other["key"], 200)["attempts"] == []
        # sent again on request: the same id and body, signed anew
        again = log["attempts"][-1]["delivery_id"]
        answer = call("POST", f"{one}/v1/app/webhook/deliveries/{again}/redeliver", key, 202)
        assert answer["delivery_id"] == again
        assert receiver.wait_for(lambda got: by_id(got)[again] == 2)
        repeat = [r for r in receiver.delivered() if r.headers["webhook-id"] == again]
        assert repeat[0].body == repeat[1].body
        signer.verify(repeat[1].body, repeat[1].headers)
        # another app cannot send it again: not in its log
        call(
            "POST",
            f"{one}/v1/app/webhook/deliveries/{again}/redeliver",
            other["key"],
            404,
        )
        # a player's token is not the app's key
        call("GET", f"{one}/v1/app/webhook/deliveries", tokens["u1"], 403)


def test_turn_only_offline_tells_a_turn_only_to_a_player_with_no_stream_open(
    redis_client, redis_url, gunicorn, opened, start_worker: Callable[..., DeliveryWorker]
):
    # the streams' leases on seats, which tell whether a player follows the game, are
    # taken where streams are capped (RATE_LIMITS on, STREAM_LIMIT_PER_SEAT above 0)
    limits = {"RATE_LIMITS": "true", "RATE_LIMIT_MOVES": "6000/minute"}
    env = {"REDIS_URL": redis_url, "AUTH_MODE": "apps", **HOOK_ENV, **limits}
    base = gunicorn(env).url
    with WebhookReceiver() as receiver:
        made = admin(redis_url, "apps", "create", "cards")
        hook = admin(
            redis_url,
            "apps",
            "webhook",
            made["id"],
            "--url",
            receiver.url,
            "--events",
            "turn",
            "game_finished",
            "--turn-only-offline",
            env=HOOK_ENV,
        )
        assert hook["webhook"]["events"] == ["turn", "game_finished"]
        assert hook["webhook"]["turn_only"] == "offline"
        start_worker()
        key = made["key"]
        tokens = {
            pid: call("POST", f"{base}/v1/players/{pid}/tokens", key, 201, json={"name": pid})[
                "token"
            ]
            for pid in ("u1", "u2")
        }
        game_id = call(
            "POST",
            f"{base}/v1/games",
            key,
            201,
            json={
                "players": [{"name": "ann", "player_id": "u1"}, {"name": "bob", "player_id": "u2"}],
                "options": {"max_turns_per_round": 2},
            },
        )["id"]
        # the first turn, told as the game was made (nobody followed it yet)
        assert receiver.wait_for(lambda got: len(got) == 1)
        # then bob follows the game (a stream open on his seat); ann does not
        stream = opened(base, game_id, {"Accept": "text/event-stream", **bearer(tokens["u2"])})
        assert stream.status == 200
        play_to_the_end([base, base], game_id, tokens)
        assert receiver.wait_for(lambda got: any(r.json()["type"] == "game_finished" for r in got))
        signer = Webhook(hook["webhook"]["secret"])
        bodies = [signer.verify(r.body, r.headers) for r in receiver.delivered()]
        turns = [b["data"] for b in bodies if b["type"] == "turn"]
        assert len(turns) > 10  # ann's turns: one a round
        assert {(t["seat"], t["player_id"]) for t in turns[1:]} == {(0, "u1")}
