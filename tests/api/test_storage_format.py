"""A stored game is in the one document format (3: the state compact, a character
a card, the results of finished rounds stored apart)."""

from __future__ import annotations

import orjson

from service.hosting.document import DOC_FORMAT
from service.store import key
from tests.api.conftest import create_game, play_one

MAX_MOVES = 2000


def play_until_results(game, rounds: int) -> None:
    """Play greedily until ``rounds`` are scored: go out when the view lists it, else
    draw from the stock and discard the costliest card of the deadwood."""
    for _move in range(MAX_MOVES):
        public = game.public()
        if len(public["results"]) >= rounds:
            return
        seat = public["round"]["turn"]
        view = game.view(seat)
        play_one(game, seat, view)
    raise AssertionError(f"{rounds} round(s) not scored in {MAX_MOVES} moves")


def scored_game(client, seed: str):
    """A 2-player game played until its first round is scored."""
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed=seed)
    play_until_results(game, 1)
    return game


def test_this_release_writes_the_compact_format(client, redis_client):
    game = scored_game(client, "format-3")
    doc = orjson.loads(redis_client.hget(key(game.id, "state"), "d"))
    assert doc["f"] == DOC_FORMAT == 3
    state = doc["state"]
    assert state["v"] == 3 and not {"options", "seed", "players", "results"} & set(state)
    hand = game.view(state["round"]["turn"])["hand"]
    assert len(state["round"]["hands"][state["round"]["turn"]]) == len(hand)
    assert all(isinstance(row[2], str) for row in doc["arr"])  # the arranged hands' cards
    results = redis_client.hget(key(game.id, "state"), "r")
    assert orjson.loads(results) == game.public()["results"]  # stored apart
    assert "results" not in orjson.loads(redis_client.hget(key(game.id, "state"), "p"))
