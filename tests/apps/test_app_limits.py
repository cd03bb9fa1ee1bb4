"""Limits per app and per player (AUTH_MODE=apps) on the test Redis, on both of the
server's paths: an app's totals (creates, moves, listings a minute), each player's
moves, the concurrent games freed as games end or vanish, the 429's form, and the
per-address limits of requests without an app's credential, unchanged."""

from __future__ import annotations

import time
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.hosting import apps
from service.hosting.app_games import LIMIT
from service.store import keys
from tests.api.conftest import make_app
from tests.apps.conftest import AppKey, bearer, mint, two_player_game

LIMITED = {"RATE_LIMITS": "true"}


def limited_client(redis_url: str, **env: str) -> FlaskClient:
    return make_app(redis_url, AUTH_MODE="apps", **LIMITED, **env).test_client()


def over(answer: Any, limit: str, scope: str) -> None:
    """``answer`` is the 429 of ``limit`` of ``scope``, with its Retry-After."""
    assert answer.status_code == 429, answer.get_json()
    body = answer.get_json()
    assert body["code"] == "APP_LIMIT_EXCEEDED"
    assert (body["limit"], body["scope"]) == (limit, scope)
    assert 1 <= int(answer.headers["Retry-After"]) <= 60


def waiting_game(client: FlaskClient, app: AppKey, player_id: str = "u1") -> Any:
    """A game of two seats, one bound to ``player_id``: it waits for a player."""
    body = {"players": [{"name": "ann", "player_id": player_id}], "seats": 2}
    return client.post("/v1/games", json=body, headers=app.auth)


def test_creates_per_minute_count_the_apps_backend_and_players_together(
    redis_client, redis_url, new_app, store
):
    client = limited_client(redis_url, RATE_LIMIT_CREATE="1/minute")
    app, other = new_app("cards"), new_app("other")
    apps.set_limits(store.apps, app.id, {"creates_per_minute": 3})
    player = bearer(mint(client, app, "u1", "ann"))
    assert waiting_game(client, app).status_code == 201  # not the address's 1/minute
    assert waiting_game(client, app, "u2").status_code == 201
    answer = client.post(
        "/v1/games", json={"players": [{"name": "ann"}], "seats": 2}, headers=player
    )
    assert answer.status_code == 201, answer.get_json()
    over(waiting_game(client, app, "u3"), "creates_per_minute", "app")
    # a player is also one client of RATE_LIMIT_CREATE (in place of its address)
    again = client.post("/v1/games", json={"players": [{"name": "x"}]}, headers=player)
    assert again.status_code == 429 and again.get_json()["code"] == "RATE_LIMITED"
    assert waiting_game(client, other).status_code == 201  # another app counts apart


def test_concurrent_games_free_as_games_end_or_vanish(redis_client, redis_url, new_app, store):
    client = limited_client(redis_url)
    app = new_app("cards")
    apps.set_limits(store.apps, app.id, {"concurrent_games": 2})
    first = waiting_game(client, app, "u1").get_json()["id"]
    second = two_player_game(client, app)["id"]
    over(waiting_game(client, app, "u3"), "concurrent_games", "app")
    # the last player leaves the first game: cancelled, and no longer counted
    ann = bearer(mint(client, app, "u1", "ann"))
    assert client.delete(f"/v1/games/{first}/seat", headers=ann).status_code == 200
    third = waiting_game(client, app, "u3")
    assert third.status_code == 201, third.get_json()
    over(waiting_game(client, app, "u4"), "concurrent_games", "app")
    # a game gone from the store (expired) counts no more once found gone
    live = keys.app_live_games_key(app.id)
    redis_client.delete(keys.key(second, keys.STATE))
    redis_client.zadd(live, {second: 0})  # counted long ago: no write of it under way
    assert waiting_game(client, app, "u4").status_code == 201
    assert redis_client.zcard(live) == 2
    # a limit of 0 is none; the operator's value back to the default (10000)
    apps.set_limits(store.apps, app.id, {"concurrent_games": 0})
    assert waiting_game(client, app, "u5").status_code == 201
    apps.set_limits(store.apps, app.id, {"concurrent_games": None})
    assert waiting_game(client, app, "u6").status_code == 201


def test_a_finished_game_frees_its_place(redis_client, redis_url, new_app, store, bots_for):
    made = make_app(redis_url, AUTH_MODE="apps", **LIMITED)
    bots_for(made)
    client = made.test_client()
    app = new_app("cards")
    apps.set_limits(store.apps, app.id, {"concurrent_games": 1})
    game = two_player_game(client, app, options={"max_turns_per_round": 4})["id"]
    over(waiting_game(client, app, "u3"), "concurrent_games", "app")
    for player_id in ("u1", "u2"):  # both resign: the bot worker plays it to its end
        token = bearer(mint(client, app, player_id, player_id))
        assert client.post(f"/v1/games/{game}/resign", headers=token).status_code == 200
    deadline = time.monotonic() + 120
    while client.get(f"/v1/games/{game}", headers=app.auth).get_json()["status"] != "finished":
        assert time.monotonic() < deadline, "the bots did not finish the game"
        time.sleep(0.05)
    assert waiting_game(client, app, "u3").status_code == 201


@pytest.mark.parametrize("fast_lane", ["true", "false"])
def test_each_players_moves_and_the_apps_total(redis_client, redis_url, new_app, store, fast_lane):
    client = limited_client(redis_url, FAST_LANE=fast_lane, RATE_LIMIT_MOVES="1/minute")
    app = new_app("cards")
    apps.set_limits(store.apps, app.id, {"player_moves_per_minute": 2, "moves_per_minute": 3})
    game = two_player_game(client, app)["id"]
    ann = [bearer(mint(client, app, "u1", "ann")) for _ in range(2)]  # two devices
    bob = bearer(mint(client, app, "u2", "bob"))
    move = {"type": "draw", "source": "stock"}

    def send(auth: dict[str, str]) -> Any:
        return client.post(f"/v1/games/{game}/moves", json=move, headers=auth)

    assert send(ann[0]).status_code != 429  # every attempt counts, legal or not
    assert send(ann[1]).status_code != 429
    over(send(ann[0]), "player_moves_per_minute", "player")  # both devices together
    assert send(bob).status_code != 429  # the app's third (ann's refused one did not count)
    over(send(bob), "moves_per_minute", "app")


def test_listings_per_minute(redis_client, redis_url, new_app, store):
    client = limited_client(redis_url)
    app = new_app("cards")
    apps.set_limits(store.apps, app.id, {"listings_per_minute": 2})
    player = bearer(mint(client, app, "u1", "ann"))
    assert client.get("/v1/games", headers=app.auth).status_code == 200
    assert client.get("/v1/games", headers=player).status_code == 200
    over(client.get("/v1/games", headers=app.auth), "listings_per_minute", "app")


def test_requests_without_an_apps_credential_keep_their_address_limits(
    redis_client, redis_url, new_app
):
    client = limited_client(
        redis_url, RATE_LIMIT_AUTH_FAILURES="2/minute", RATE_LIMIT_MOVES="2/minute"
    )
    app = new_app("cards")
    codes = [
        client.post("/v1/games", json={"players": [{"name": "x"}]}).status_code for _ in range(3)
    ]
    assert codes == [401, 401, 429]
    assert (
        client.post("/v1/games", json={"players": [{"name": "x"}]}).get_json()["code"]
        == "RATE_LIMITED"
    )
    # a seat's token (a seat not bound to a player) is counted as before: per token
    created = client.post(
        "/v1/games", json={"players": [{"name": "ann"}, {"name": "bob"}]}, headers=app.auth
    ).get_json()
    seat = bearer(created["players"][0]["token"])
    move = {"type": "draw", "source": "stock"}
    codes = [
        client.post(f"/v1/games/{created['id']}/moves", json=move, headers=seat)
        .get_json()
        .get("code")
        for _ in range(3)
    ]
    assert codes[2] == "RATE_LIMITED"


def test_limits_are_off_with_rate_limits_but_concurrent_games(
    redis_client, redis_url, new_app, store
):
    client = make_app(redis_url, AUTH_MODE="apps").test_client()  # RATE_LIMITS=false
    app = new_app("cards")
    apps.set_limits(store.apps, app.id, {"creates_per_minute": 1, "concurrent_games": 2})
    assert waiting_game(client, app, "u1").status_code == 201
    assert waiting_game(client, app, "u2").status_code == 201
    over(waiting_game(client, app, "u3"), "concurrent_games", "app")


def test_a_quick_join_opening_a_table_counts_as_a_game(redis_client, redis_url, new_app, store):
    client = limited_client(redis_url)
    app = new_app("cards")
    apps.set_limits(store.apps, app.id, {"concurrent_games": 1})
    ann = bearer(mint(client, app, "u1", "ann"))
    bob = bearer(mint(client, app, "u2", "bob"))
    first = client.post("/v1/lobby/quick-join", json={"name": "ann"}, headers=ann)
    assert first.status_code in (200, 201), first.get_json()
    # bob takes ann's table's seat: no new game, within the limit
    assert client.post("/v1/lobby/quick-join", json={"name": "bob"}, headers=bob).status_code in (
        200,
        201,
    )
    cy = bearer(mint(client, app, "u3", "cy"))
    over(client.post("/v1/lobby/quick-join", json={"name": "cy"}, headers=cy), LIMIT, "app")
    assert redis_client.zcard(keys.app_live_games_key(app.id)) == 1


def test_an_ended_game_whose_drop_was_lost_is_found_at_the_limit(
    redis_client, redis_url, new_app, store
):
    client = limited_client(redis_url)
    app = new_app("cards")
    apps.set_limits(store.apps, app.id, {"concurrent_games": 1})
    game = waiting_game(client, app, "u1").get_json()["id"]
    ann = bearer(mint(client, app, "u1", "ann"))
    assert client.delete(f"/v1/games/{game}/seat", headers=ann).status_code == 200
    live = keys.app_live_games_key(app.id)
    assert redis_client.zcard(live) == 0
    redis_client.zadd(live, {game: int(time.time() * 1000)})  # as if its drop were lost
    made = waiting_game(client, app, "u2")  # at the limit: its games are read, one ended
    assert made.status_code == 201, made.get_json()
    assert [m.decode() for m in redis_client.zrange(live, 0, -1)] == [made.get_json()["id"]]
