"""Leaderboards over HTTP in apps mode: pages for the app's key and its players,
around-me for a player, a player's place for the app; another app's board is its
own; bad rulesets, sizes, limits and cursors are clear problems; open mode has no
boards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from service.hosting import leaderboards
from service.hosting.leaderboards import Board
from tests.apps.conftest import AppKey, bearer, mint

BASE = "/v1/leaderboards/classic/2"


def post_board(app: Flask, app_id: str, ratings: dict[str, float], games: int = 5) -> None:
    services = app.extensions["t13"]
    for player, rating in ratings.items():
        leaderboards.post(
            services.store, services.config, Board(app_id, "classic", 2), player, rating, games
        )


def test_pages_and_places(
    apps_app: Flask, apps_client: FlaskClient, new_app: Callable[[str], AppKey]
) -> None:
    cards = new_app("cards")
    ratings = {f"u{n}": float(n % 7) for n in range(30)}
    post_board(apps_app, cards.id, ratings)
    post_board(apps_app, cards.id, {"newbie": 99.0}, games=4)  # too few games
    expected = sorted(ratings, key=lambda p: (-ratings[p], p))

    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        url = f"{BASE}?limit=8" + (f"&cursor={cursor}" if cursor else "")
        answer = apps_client.get(url, headers=cards.auth)
        assert answer.status_code == 200, answer.get_json()
        body = answer.get_json()
        assert body["ruleset"] == "classic" and body["table_size"] == 2
        assert body["total"] == 30 and body["min_games"] == 5
        seen += body["entries"]
        cursor = body["next"]
        if cursor is None:
            break
    assert [e["player_id"] for e in seen] == expected
    assert [e["rank"] for e in seen] == list(range(1, 31))
    assert seen[0] == {"rank": 1, "player_id": expected[0], "rating": 6.0, "games": 5}

    token = mint(apps_client, cards, "u10", "ann")
    as_player = apps_client.get(f"{BASE}?limit=3", headers=bearer(token))
    assert as_player.status_code == 200
    assert [e["player_id"] for e in as_player.get_json()["entries"]] == expected[:3]

    mine = apps_client.get(f"{BASE}/around-me?count=2", headers=bearer(token)).get_json()
    at = expected.index("u10")
    assert mine["player_id"] == "u10" and mine["rank"] == at + 1
    assert [e["player_id"] for e in mine["entries"]] == expected[at - 2 : at + 3]
    theirs = apps_client.get(f"{BASE}/players/u10?count=2", headers=cards.auth).get_json()
    assert theirs == mine

    unranked = mint(apps_client, cards, "newbie", "neo")
    place = apps_client.get(f"{BASE}/around-me", headers=bearer(unranked)).get_json()
    assert place["rank"] is None and place["entries"] == [] and place["total"] == 30

    # another app's board is its own
    other = new_app("other")
    assert apps_client.get(BASE, headers=other.auth).get_json()["total"] == 0


def test_who_may_read_what(apps_client: FlaskClient, new_app: Callable[[str], AppKey]) -> None:
    cards = new_app("cards")
    token = mint(apps_client, cards, "u1", "ann")
    assert apps_client.get(BASE).status_code == 401
    refused = apps_client.get(f"{BASE}/around-me", headers=cards.auth)
    assert refused.status_code == 403 and refused.get_json()["code"] == "CREDENTIAL_NOT_ALLOWED"
    refused = apps_client.get(f"{BASE}/players/u1", headers=bearer(token))
    assert refused.status_code == 403


def test_bad_requests_are_clear_problems(
    apps_client: FlaskClient, new_app: Callable[[str], AppKey]
) -> None:
    cards = new_app("cards")
    for path, detail in (
        ("/v1/leaderboards/chess/2", "no leaderboard of ruleset 'chess'"),
        ("/v1/leaderboards/classic/9", "no leaderboard of 9 seats"),
        ("/v1/leaderboards/classic/1", "no leaderboard of 1 seats"),
    ):
        answer = apps_client.get(path, headers=cards.auth)
        assert answer.status_code == 404, path
        body = answer.get_json()
        assert body["code"] == "NOT_FOUND" and body["detail"].startswith(detail)
    two = apps_client.get("/v1/leaderboards/classic/two", headers=cards.auth)
    assert two.status_code == 404 and "a table size is a number" in two.get_json()["detail"]
    for query in (
        "limit=0",
        "limit=101",
        "limit=x",
        "cursor=nope",
        "cursor=1:1e999:u1",
        "cursor=1:1.0:u%7B1%7D",
        "other=1",
    ):
        answer = apps_client.get(f"{BASE}?{query}", headers=cards.auth)
        assert answer.status_code == 422, query
        assert answer.get_json()["code"] == "VALIDATION_ERROR"
    token = mint(apps_client, cards, "u1", "ann")
    for query in ("count=-1", "count=51", "count=x"):
        answer = apps_client.get(f"{BASE}/around-me?{query}", headers=bearer(token))
        assert answer.status_code == 422, query


def test_open_mode_has_no_boards(client: FlaskClient) -> None:
    for path in (BASE, f"{BASE}/around-me", f"{BASE}/players/u1"):
        answer = client.get(path)
        assert answer.status_code == 404, path
        assert "apps mode only" in answer.get_json()["detail"]
