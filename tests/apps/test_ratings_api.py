"""Players' ratings over HTTP: ``GET /v1/me`` (the player's token) and ``GET
/v1/players/{player_id}`` (the app's key), filtered by ruleset and table size; bad
input is a 4xx problem, and in open mode there are no players."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.hosting import players
from service.hosting.ratings import DEFAULT, current_rating
from service.store import GameStore
from tests.api.conftest import make_app
from tests.apps.conftest import bearer, mint
from tests.apps.test_archives import finished_game, run_step


def test_a_players_ratings_are_in_me_and_in_the_apps_read(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore
) -> None:
    app = new_app("cards")
    ann, bob = mint(apps_client, app, "u1", "ann"), mint(apps_client, app, "u2", "bob")
    config = apps_app.extensions["t13"].config
    me = apps_client.get("/v1/me", headers=bearer(ann))
    assert me.status_code == 200, me.get_json()
    assert me.get_json() == {"app_id": app.id, "player_id": "u1", "name": "ann", "ratings": []}

    assert run_step(store, config, finished_game(apps_client, app, ann, bob))
    ann_rating = current_rating(store, app.id, "classic", 2, "u1")
    shown = {
        "ruleset": "classic",
        "table_size": 2,
        "rating": pytest.approx(ann_rating.displayed),
        "mu": pytest.approx(ann_rating.mu),
        "sigma": pytest.approx(ann_rating.sigma),
        "games": 1,
    }
    assert apps_client.get("/v1/me", headers=bearer(ann)).get_json()["ratings"] == [shown]
    read = apps_client.get("/v1/players/u1", headers=app.auth)
    assert read.status_code == 200, read.get_json()
    assert read.get_json() == {"player_id": "u1", "barred": False, "ratings": [shown]}
    # filtered; a pool not played yet, asked for by both: the default rating
    assert apps_client.get("/v1/me?ruleset=party", headers=bearer(ann)).get_json()["ratings"] == []
    assert apps_client.get("/v1/me?table_size=2", headers=bearer(ann)).get_json()["ratings"] == [
        shown
    ]
    fresh = apps_client.get("/v1/players/u1?ruleset=finnish&table_size=4", headers=app.auth)
    assert fresh.get_json()["ratings"] == [
        {
            "ruleset": "finnish",
            "table_size": 4,
            "rating": pytest.approx(0.0),
            "mu": DEFAULT.mu,
            "sigma": pytest.approx(DEFAULT.sigma),
            "games": 0,
        }
    ]
    # a player the app never minted for: no ratings; a barred one says so
    assert apps_client.get("/v1/players/nobody", headers=app.auth).get_json() == {
        "player_id": "nobody",
        "barred": False,
        "ratings": [],
    }
    players.set_barred(store.apps, app.id, "u2", True)
    barred = apps_client.get("/v1/players/u2", headers=app.auth).get_json()
    assert barred["barred"] is True and [r["games"] for r in barred["ratings"]] == [1]
    # another app sees its own player u1, who has no ratings
    other = new_app("other")
    assert apps_client.get("/v1/players/u1", headers=other.auth).get_json()["ratings"] == []


@pytest.mark.parametrize(
    "query",
    ["ruleset=nope", "table_size=1", "table_size=9", "table_size=two", "table_size=+2", "x=1"],
)
def test_a_bad_ruleset_or_size_is_a_422(
    apps_client: FlaskClient, new_app: Any, store: GameStore, query: str
) -> None:
    app = new_app("cards")
    ann = mint(apps_client, app, "u1", "ann")
    for path, auth in (("/v1/me", bearer(ann)), ("/v1/players/u1", app.auth)):
        answer = apps_client.get(f"{path}?{query}", headers=auth)
        assert answer.status_code == 422, (path, query, answer.get_json())
        assert answer.get_json()["code"] == "VALIDATION_ERROR"
        assert answer.headers["Content-Type"] == "application/problem+json"


def test_who_may_read_ratings(apps_client: FlaskClient, new_app: Any, store: GameStore) -> None:
    app = new_app("cards")
    ann = mint(apps_client, app, "u1", "ann")
    assert apps_client.get("/v1/me").status_code == 401
    assert apps_client.get("/v1/me", headers=bearer("t13_pt_nope")).status_code == 401
    assert apps_client.get("/v1/me", headers=app.auth).status_code == 403
    assert apps_client.get("/v1/players/u1", headers=bearer(ann)).status_code == 403
    assert apps_client.get("/v1/players/u1").status_code == 401
    bad_id = apps_client.get("/v1/players/" + "x" * 129, headers=app.auth)
    assert bad_id.status_code == 404 and bad_id.get_json()["code"] == "NOT_FOUND"
    bad_chars = apps_client.get("/v1/players/a%20b", headers=app.auth)
    assert bad_chars.status_code == 404


def test_ratings_are_of_apps_mode_alone(redis_client: Any, redis_url: str) -> None:
    client = make_app(redis_url).test_client()
    for path in ("/v1/me", "/v1/players/u1"):
        answer = client.get(path)
        assert answer.status_code == 404 and answer.get_json()["code"] == "NOT_FOUND"
