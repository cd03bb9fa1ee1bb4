"""A seat's view read from the seats' parts saved with the last change (field
``q`` of the game's state hash) is exactly the view built from the document,
for the holder of that seat's token only, and never from parts saved for
another version."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from service.store import key
from service.store.keys import STATE
from tests.api.conftest import Game, create_game, play_on, store_reads


@pytest.fixture
def document_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The game ids a seat's view loaded the document for."""
    return store_reads(monkeypatch, "load_game")


def _answer(client: FlaskClient, game: Game, seat: int, **headers: str) -> tuple[Any, ...]:
    response = client.get(f"/v1/games/{game.id}/view", headers={**game.auth(seat), **headers})
    kept = sorted((k, v) for k, v in response.headers.items() if k != "X-Request-ID")
    return response.status_code, response.get_data(), kept


def test_a_seat_view_from_the_saved_parts_is_the_view_from_the_document(
    client: FlaskClient, redis_client: redis.Redis, document_reads: list[str]
) -> None:
    game = create_game(
        client,
        [{"name": "a"}, {"name": "b"}, {"name": "c", "bot": "basic"}],
        seed="seat-parts",
    )
    for step in range(6):
        play_on(game, step)
        document_reads.clear()
        saved = {seat: _answer(client, game, seat) for seat in game.tokens}
        for seat, answer in saved.items():
            assert answer[0] == 200
            etag = dict(answer[2])["ETag"]
            assert _answer(client, game, seat, **{"If-None-Match": etag})[0] == 304
        assert document_reads == []  # none of them read the document
        redis_client.hdel(key(game.id, STATE), "q")  # no parts saved: the document is read
        for seat, answer in saved.items():
            assert _answer(client, game, seat) == answer
        assert document_reads == [game.id] * len(saved)
        play_on(game, 1)  # which saves the parts again


def test_parts_saved_for_another_version_are_never_used(
    client: FlaskClient, redis_client: redis.Redis, document_reads: list[str]
) -> None:
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="stale-parts")
    state = key(game.id, STATE)
    old = redis_client.hget(state, "q")
    assert old is not None and old.startswith(b"1\n")
    play_on(game, 1)  # version 2: the first player drew, hands differ
    redis_client.hset(state, "q", old)  # left by a write that did not replace them
    for seat in game.tokens:
        document_reads.clear()
        view = game.view(seat)
        assert document_reads == [game.id]
        assert view["version"] == 2
    assert game.view(game.public()["round"]["turn"])["round"]["phase"] == "discard"


def test_the_saved_parts_answer_only_their_own_tokens(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="own-parts")
    saved = redis_client.hget(key(game.id, STATE), "q")
    assert saved is not None
    assert all(token.encode() not in saved for token in game.tokens.values())  # hashes only
    hands = {seat: game.view(seat)["hand"] for seat in game.tokens}
    assert hands[0] != hands[1]
    for seat in game.tokens:
        assert game.view(seat)["seat"] == seat
    path = f"/v1/games/{game.id}/view"
    assert client.get(path, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert client.get(path).status_code == 401
