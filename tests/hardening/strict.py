"""What the strict-input tests share: a move, the problem media type, a check that an
answer is a problem, a new game and its player to move, a move posted as raw bytes.
(Their app on either lane, ``lane_client``, is a fixture of conftest.py.)"""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from tests.api.conftest import Game, create_game

DRAW = {"type": "draw", "source": "stock"}
PROBLEM = "application/problem+json"


def problem(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.get_data()[:300])
    assert response.mimetype == PROBLEM, response.mimetype
    body = response.get_json()
    assert body["status"] == status and body["title"] and "detail" in body
    if code is not None:
        assert body["code"] == code, body
    return dict(body)


def new_game(client: FlaskClient, seed: str = "strict") -> tuple[Game, int]:
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed=seed)
    return game, game.public()["round"]["turn"]


def post_move(game: Game, seat: int, data: bytes, **headers: str) -> Any:
    return game.client.post(
        f"/v1/games/{game.id}/moves",
        data=data,
        headers={**game.auth(seat), "Content-Type": "application/json", **headers},
    )
