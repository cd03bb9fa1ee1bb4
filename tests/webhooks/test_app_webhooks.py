"""Lifecycle webhooks per app, end to end: two gunicorn instances in apps mode on the
test Redis, the apps and their webhooks made with the operator's command, a real
delivery worker and receivers on 127.0.0.1; every signature checked with the
Standard Webhooks library."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from standardwebhooks.webhooks import Webhook

from harness.webhook_receiver import Received, WebhookReceiver
from service.webhooks.worker import DeliveryWorker
from tests.apps.test_two_instances import admin
from tests.webhooks.app_story import (
    Play,
    bearer,
    call,
    jwt_signer,
    refused_everything,
    revoked_everywhere,
)
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


def mint(base: str, key: str, player_id: str) -> str:
    token: str = call(
        "POST", f"{base}/v1/players/{player_id}/tokens", key, 201, json={"name": player_id}
    )["token"]
    return token


def by_id(received: list[Received]) -> Counter[str]:
    return Counter(r.headers["webhook-id"] for r in received)


def test_the_apps_receiver_gets_every_lifecycle_event_of_its_games_signed_once_per_id(
    redis_client,
    redis_url,
    gunicorn,
    start_worker: Callable[..., DeliveryWorker],
    tmp_path: Path,
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
        phone, tablet, cy = (mint(two, key, pid) for pid in ("u1", "u1", "u3"))
        bob = jwt_signer(redis_url, made["id"], tmp_path)("u2")  # the app signs it itself
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
        # ...ann plays it from two devices, bob with his JWT, each move on the next instance
        play = Play(servers, game_id)
        assert play.play({0: [phone, tablet], 1: [bob]}, until=16) == "playing"
        anns = {(token, base) for token, base in play.used if token in (phone, tablet)}
        assert anns == {(token, base) for token in (phone, tablet) for base in servers}
        # another app's key, and its player of the same id, find no such game anywhere
        stranger = mint(one, other["key"], "u1")
        for credential in (other["key"], stranger):
            refused_everything(servers, game_id, key, credential)
        # the app revokes ann's tokens mid-game: both refused on both instances within a
        # second of the revocation's answer...
        refused = revoked_everywhere(servers, game_id, key, "u1", [phone, tablet])
        assert max(refused.values()) < 1.0, refused
        # ...it mints her a new one, and the game goes on to its end on both
        tokens = {"u1": mint(two, key, "u1"), "u2": bob, "u3": cy}
        assert play.play({0: [tokens["u1"]], 1: [bob]}) == "finished"
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
            for secret in [
                key,
                other["key"],
                hook["webhook"]["secret"],
                phone,
                tablet,
                stranger,
                *tokens.values(),
            ]:
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
        # the latest 200 attempts, each once; games are delivered in parallel, so
        # only each game's own order is the order its deliveries arrived in
        logged = [a["delivery_id"] for a in log["attempts"]]
        game_of = {b["id"]: b["game_id"] for b in bodies}
        assert len(logged) == len(set(logged)) == min(len(bodies), 200)
        assert set(logged) <= set(game_of)
        if len(bodies) <= 200:
            assert set(logged) == set(game_of)
        for game in set(game_of.values()):
            mine = [i for i in logged if game_of[i] == game]
            arrived = [b["id"] for b in bodies if b["id"] in mine]
            assert mine == arrived
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
        # a player's token, or JWT, is not the app's key
        call("GET", f"{one}/v1/app/webhook/deliveries", tokens["u1"], 403)
        call("GET", f"{two}/v1/app/webhook/deliveries", bob, 403)


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
        tokens = {pid: mint(base, key, pid) for pid in ("u1", "u2")}
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
        assert (
            Play([base, base], game_id).play({0: [tokens["u1"]], 1: [tokens["u2"]]}) == "finished"
        )
        assert receiver.wait_for(lambda got: any(r.json()["type"] == "game_finished" for r in got))
        signer = Webhook(hook["webhook"]["secret"])
        bodies = [signer.verify(r.body, r.headers) for r in receiver.delivered()]
        turns = [b["data"] for b in bodies if b["type"] == "turn"]
        assert len(turns) > 10  # ann's turns: one a round
        assert {(t["seat"], t["player_id"]) for t in turns[1:]} == {(0, "u1")}
