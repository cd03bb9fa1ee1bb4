"""Idempotency keys never hand out seats: a replay of a request without a bearer
token (a create, a join) answers with tokens, so its key is the only proof that
the replay is the client's own and must be random; guessable keys are refused
before anything is done."""

from __future__ import annotations

import secrets
import uuid

import pytest

from service.store.keys import STATE, key
from tests.api.conftest import create_game

CREATE = {"players": [{"name": "ann"}], "seats": 2}
WEAK_KEYS = ["k", "create-1", "game-for-ann", "0" * 40, "a" * 64, "abcdefab" * 2, "a key!"]
STRONG_KEYS = [str(uuid.uuid4()), uuid.uuid4().hex, secrets.token_urlsafe(16)]


def _games(redis_client) -> int:
    return sum(1 for _ in redis_client.scan_iter(match=key("*", STATE)))


@pytest.mark.parametrize("weak", WEAK_KEYS)
def test_a_create_with_a_guessable_key_is_refused_and_creates_nothing(client, redis_client, weak):
    before = _games(redis_client)
    response = client.post("/v1/games", json=CREATE, headers={"Idempotency-Key": weak})
    assert response.status_code == 400
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["code"] == "WEAK_IDEMPOTENCY_KEY"
    assert set(response.get_json()) == {"type", "title", "status", "detail", "code"}
    assert _games(redis_client) == before


@pytest.mark.parametrize("weak", WEAK_KEYS)
def test_a_join_with_a_guessable_key_is_refused_and_takes_no_seat(client, weak):
    game = create_game(client, [{"name": "ann"}], seats=2)
    version = game.public()["version"]
    response = client.post(
        f"/v1/games/{game.id}/players", json={"name": "bob"}, headers={"Idempotency-Key": weak}
    )
    assert response.status_code == 400
    assert response.get_json()["code"] == "WEAK_IDEMPOTENCY_KEY"
    public = game.public()
    assert public["version"] == version
    assert [p["name"] for p in public["players"]] == ["ann", None]


@pytest.mark.parametrize("strong", STRONG_KEYS)
def test_a_random_key_replays_a_create_and_a_join_with_the_same_tokens(client, strong):
    first = client.post("/v1/games", json=CREATE, headers={"Idempotency-Key": strong})
    again = client.post("/v1/games", json=CREATE, headers={"Idempotency-Key": strong})
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    game_id = first.get_json()["id"]
    join_key = {"Idempotency-Key": strong[::-1]}
    joined = client.post(f"/v1/games/{game_id}/players", json={"name": "bob"}, headers=join_key)
    rejoined = client.post(f"/v1/games/{game_id}/players", json={"name": "bob"}, headers=join_key)
    assert joined.status_code == rejoined.status_code == 201
    assert rejoined.get_json()["token"] == joined.get_json()["token"]


def test_a_create_whose_saved_answer_expired_makes_a_new_game(client, redis_client):
    """A keyed create finds its game by the key; once the answer saved for the key
    has expired while that game lives on, the key makes a new game, as a new key
    would, and never answers with the other game's tokens."""
    strong = uuid.uuid4().hex
    first = client.post("/v1/games", json=CREATE, headers={"Idempotency-Key": strong})
    assert first.status_code == 201
    first_id = first.get_json()["id"]
    redis_client.delete(key(first_id, "idem"))  # as its TTL would
    again = client.post("/v1/games", json=CREATE, headers={"Idempotency-Key": strong})
    assert again.status_code == 201 and "Idempotent-Replayed" not in again.headers
    assert again.get_json()["id"] != first_id
    assert again.get_json()["players"][0]["token"] != first.get_json()["players"][0]["token"]
    assert client.get(f"/v1/games/{first_id}").get_json()["version"] == 1


def test_a_player_keys_moves_freely_the_token_scopes_them(make_game):
    """With a bearer token the key is scoped to the seat: any key will do."""
    game = make_game()
    seat = game.public()["round"]["turn"]
    first = game.move(seat, {"type": "draw", "source": "stock"}, **{"Idempotency-Key": "m1"})
    again = game.move(seat, {"type": "draw", "source": "stock"}, **{"Idempotency-Key": "m1"})
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
