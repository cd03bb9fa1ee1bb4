"""Lobby test helpers: quick-join, join, list every page (on the Flask test client)."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from tests.api.conftest import Game, create_game


def listed_game(client: FlaskClient, seats: int = 3, humans: int = 1, **body: Any) -> Game:
    """A listed game with ``humans`` seated of ``seats``."""
    players = [{"name": f"h{i}"} for i in range(humans)]
    return create_game(client, players, seats=seats, listed=True, **body)


def quick_join(client: FlaskClient, name: str, **body: Any) -> dict[str, Any]:
    answer = client.post("/v1/lobby/quick-join", json={"name": name, **body})
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def join(client: FlaskClient, game: Game, name: str, **body: Any) -> Any:
    return client.post(f"/v1/games/{game.id}/players", json={"name": name, **body})


def list_all(client: FlaskClient, **query: Any) -> list[dict[str, Any]]:
    """Every entry of a listing, page after page (following ``next``)."""
    entries: list[dict[str, Any]] = []
    cursor = None
    for _page in range(1000):
        params = {**query, **({"cursor": cursor} if cursor else {})}
        answer = client.get("/v1/games", query_string=params)
        assert answer.status_code == 200, answer.get_json()
        body = answer.get_json()
        entries += body["games"]
        cursor = body["next"]
        if cursor is None:
            assert "Link" not in answer.headers
            return entries
        assert answer.headers["Link"].endswith('>; rel="next"')
    raise AssertionError("the listing never ended")


def ids(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["id"] for entry in entries]
