"""The archiver posts each rated player's rating to its app's leaderboard (issue 44),
once per game whatever the step's re-runs, and a barred player is taken off the
boards and kept off -- on the test Redis, in apps mode, through the HTTP API."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from service.hosting import leaderboards
from service.hosting.archiving import archive_game
from service.hosting.leaderboards import Board
from service.hosting.ratings import current_rating
from service.store import GameStore
from tests.api.conftest import make_app
from tests.apps.conftest import AppKey, bearer, mint
from tests.apps.test_archives import finished_game, run_step


def board_rows(client: FlaskClient, app: AppKey) -> list[tuple[int, str, float, int]]:
    answer = client.get("/v1/leaderboards/classic/2?limit=10", headers=app.auth)
    assert answer.status_code == 200, answer.get_json()
    return [
        (e["rank"], e["player_id"], e["rating"], e["games"]) for e in answer.get_json()["entries"]
    ]


def test_a_rated_game_puts_its_players_on_the_board_once_and_a_bar_takes_one_off(
    redis_client: Any, redis_url: str, new_app: Any, store: GameStore
) -> None:
    flask_app: Flask = make_app(redis_url, AUTH_MODE="apps", LEADERBOARD_MIN_GAMES="1")
    config = flask_app.extensions["t13"].config
    client = flask_app.test_client()
    app = new_app("cards")
    ann, bob = mint(client, app, "u1", "ann"), mint(client, app, "u2", "bob")
    assert board_rows(client, app) == []

    game_id = finished_game(client, app, ann, bob)
    assert run_step(store, config, game_id)
    archive_game(store, config, game_id)  # the step again: nothing changes
    ratings = {p: current_rating(store, app.id, "classic", 2, p) for p in ("u1", "u2")}
    rows = board_rows(client, app)
    # each once, with its rating and one game; highest first, ties by player id
    assert {r[1]: (r[2], r[3]) for r in rows} == {
        p: (ratings[p].displayed, 1) for p in ("u1", "u2")
    }
    assert [r[1] for r in rows] == sorted(ratings, key=lambda p: (-ratings[p].displayed, p))
    assert [r[0] for r in rows] == [1, 2]
    me = client.get("/v1/leaderboards/classic/2/around-me?count=1", headers=bearer(ann))
    assert me.status_code == 200 and me.get_json()["rank"] in (1, 2)

    # the app bars bob: off every board at once; a post of his next rating (a game
    # of his that was finishing) is taken off again by the step
    assert client.put("/v1/players/u2/bar", headers=app.auth).status_code == 200
    assert [r[1] for r in board_rows(client, app)] == ["u1"]
    barred = leaderboards.post(store, config, Board(app.id, "classic", 2), "u2", 1.0, 2)
    assert barred  # a post alone would list him...
    archive_game(store, config, game_id)  # ...the step posts, then checks the bar
    assert [r[1] for r in board_rows(client, app)] == ["u1"]
    # lifted: he is back at his next rated game
    assert client.delete("/v1/players/u2/bar", headers=app.auth).status_code == 200
    assert [r[1] for r in board_rows(client, app)] == ["u1"]
