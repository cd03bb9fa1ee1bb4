"""A seeded game's creator can compute every hand: such a game is never listed
nor offered by quick-join, and its public view says it is seeded."""

from __future__ import annotations

from tests.api.conftest import create_game, make_app
from tests.lobby.conftest import ids, list_all

PLAYERS = [{"name": "creator"}]


def test_a_seeded_game_cannot_be_listed(client):
    answer = client.post(
        "/v1/games", json={"players": PLAYERS, "seats": 3, "seed": "known", "listed": True}
    )
    assert answer.status_code == 422, answer.get_json()
    problem = answer.get_json()
    assert problem["code"] == "INVALID_OPTION"
    assert "seed" in problem["detail"] and "listed" in problem["detail"]
    assert list_all(client) == []
    # quick-join finds no game to seat a stranger in: it makes a new, unseeded one
    joined = client.post("/v1/lobby/quick-join", json={"name": "stranger", "seats": 3})
    assert joined.status_code == 201 and joined.get_json()["created"] is True
    assert (
        client.get(f"/v1/games/{joined.get_json()['id']}").get_json()["fairness"]["seeded"] is False
    )

    # the same seed unlisted is a game of its own, found by its id, which says so
    seeded = create_game(client, PLAYERS, seats=3, seed="known")
    assert seeded.public()["fairness"]["seeded"] is True
    assert seeded.id not in ids(list_all(client))


def test_a_seed_the_server_ignores_does_not_stop_listing(redis_client, redis_url):
    client = make_app(redis_url, ALLOW_SEEDED_GAMES="false").test_client()
    game = create_game(client, PLAYERS, seats=3, seed="ignored", listed=True)
    assert game.public()["fairness"]["seeded"] is False
    assert ids(list_all(client)) == [game.id]
