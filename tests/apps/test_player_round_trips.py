"""A player's credential costs no Redis round trip of its own on the hottest requests:
a seat's view and a move read the player's hash in the round trip of the game's read
(:attr:`service.api.context.Call.first_read`).  Counted by Redis itself (``INFO stats``
``total_reads_processed``: one per round trip a client sends), the least over a few
requests, so that a read of the app's record (cached half a second) does not count."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from flask.testing import FlaskClient

from tests.api.test_play import choose
from tests.apps.conftest import bearer, mint, two_player_game

TRIES = 6


def round_trips(client: redis.Redis, send: Callable[[], None]) -> int:
    """The round trips Redis served for ``send()`` (its own INFO left out)."""
    before = int(client.info("stats")["total_reads_processed"])
    send()
    return int(client.info("stats")["total_reads_processed"]) - before - 1


def least(client: redis.Redis, send: Callable[[], None]) -> int:
    return min(round_trips(client, send) for _ in range(TRIES))


def view(client: FlaskClient, game_id: str, token: str) -> Callable[[], None]:
    def send() -> None:
        answer = client.get(f"/v1/games/{game_id}/view", headers=bearer(token))
        assert answer.status_code == 200, answer.get_json()

    return send


def move(client: FlaskClient, game_id: str, tokens: list[str]) -> Callable[[], None]:
    """Sends the next move of ``game_id``, with the token of the seat to play."""

    def send() -> None:
        public = client.get(f"/v1/games/{game_id}", headers=bearer(tokens[0])).get_json()
        token = tokens[public["round"]["turn"]]
        seen = client.get(f"/v1/games/{game_id}/view", headers=bearer(token)).get_json()
        sent = client.post(f"/v1/games/{game_id}/moves", json=choose(seen), headers=bearer(token))
        assert sent.status_code == 200, sent.get_json()

    return send


def test_a_players_view_and_move_take_the_round_trips_of_a_seats(
    apps_client: FlaskClient, new_app: Any, redis_client: redis.Redis
) -> None:
    app = new_app("cards")
    bound = two_player_game(apps_client, app)["id"]
    players = [mint(apps_client, app, "u1", "ann"), mint(apps_client, app, "u2", "bob")]
    made = apps_client.post(
        "/v1/games", json={"players": [{"name": "cy"}, {"name": "di"}]}, headers=app.auth
    ).get_json()
    seats = [seat["token"] for seat in made["players"]]
    for token in players:
        assert least(redis_client, view(apps_client, bound, token)) == 1
    for token in seats:
        assert least(redis_client, view(apps_client, made["id"], token)) == 1
    by_player = least(redis_client, move(apps_client, bound, players))
    by_seat = least(redis_client, move(apps_client, made["id"], seats))
    assert by_player == by_seat
