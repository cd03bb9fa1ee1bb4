"""Games stored by earlier releases keep being served and played, and their next
write is in this release's format (3: the state compact, a character a card);
``GAME_FORMAT`` makes this release write what an older one reads, for rolling
upgrades.  Format 2 stores the results of finished rounds apart, with the state
as a self-contained engine dict; format 1 kept the results inside the document
and inside the saved public view."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import orjson

from service.engine.cards import cards_from_codes
from service.hosting.document import DOC_FORMAT, set_write_format, with_results
from service.hosting.record import GameRecord
from service.store import key
from tests.api.conftest import create_game, make_app, play_on, play_one

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


def seat_views(game) -> dict[int, dict]:
    return {s: game.view(s) for s in (0, 1)}


@contextmanager
def writing(doc_format: int) -> Iterator[None]:
    set_write_format(doc_format)
    try:
        yield
    finally:
        set_write_format(DOC_FORMAT)  # what any app made after this writes anyway


def as_format_2(redis_client, game_id: str) -> None:
    """Rewrite a stored game the way the release before this one stored it."""
    state_key = key(game_id, "state")
    stored = redis_client.hgetall(state_key)
    record = GameRecord.loaded(stored[b"d"], stored[b"r"])
    with writing(2):
        redis_client.hset(state_key, "d", record.to_bytes())
    redis_client.hdel(state_key, "q")  # it saved no seat parts: views read the document


def as_format_1(redis_client, game_id: str) -> None:
    """Rewrite a stored game the way the release before the previous one stored it."""
    as_format_2(redis_client, game_id)
    state_key = key(game_id, "state")
    stored = redis_client.hgetall(state_key)
    doc = orjson.loads(stored[b"d"])
    doc["f"] = 1
    doc["state"]["results"] = stored[b"r"].decode()
    public = with_results(stored[b"p"], stored[b"r"])
    redis_client.hset(state_key, mapping={"d": orjson.dumps(doc), "p": public})
    redis_client.hdel(state_key, "r")


def test_this_release_writes_the_compact_format(client, redis_client):
    game = scored_game(client, "format-3")
    doc = orjson.loads(redis_client.hget(key(game.id, "state"), "d"))
    assert doc["f"] == 3
    state = doc["state"]
    assert state["v"] == 3 and not {"options", "seed", "players", "results"} & set(state)
    hand = game.view(state["round"]["turn"])["hand"]
    assert len(state["round"]["hands"][state["round"]["turn"]]) == len(hand)
    assert all(isinstance(row[2], str) for row in doc["arr"])  # the arranged hands' cards


def test_a_format_2_game_is_served_and_its_next_write_is_compact(client, redis_client):
    game = scored_game(client, "format-2")
    before = game.public()
    seats = seat_views(game)
    state_key = key(game.id, "state")

    as_format_2(redis_client, game.id)
    doc = orjson.loads(redis_client.hget(state_key, "d"))
    assert doc["f"] == 2 and doc["state"]["v"] == 2 and "options" in doc["state"]
    assert game.public() == before
    assert seat_views(game) == seats

    seat = before["round"]["turn"]
    assert game.move(seat, seats[seat]["legal_moves"][0]).status_code == 200
    assert orjson.loads(redis_client.hget(state_key, "d"))["f"] == 3
    assert game.public()["results"] == before["results"]
    play_on(game, 6)  # and play goes on


def test_game_format_2_writes_what_the_previous_release_reads(redis_client, redis_url):
    """``GAME_FORMAT=2`` (a rolling upgrade from the release before this one): the
    state as the engine's self-contained dict, card codes, the arranged hands'
    card ids as lists, the results apart."""
    game = scored_game(make_app(redis_url).test_client(), "format-2w")
    with writing(2):
        game.client = make_app(redis_url, GAME_FORMAT="2").test_client()
        before = game.public()
        seat = before["round"]["turn"]
        view = game.view(seat)
        assert game.move(seat, view["legal_moves"][0]).status_code == 200
        stored = redis_client.hgetall(key(game.id, "state"))
        doc = orjson.loads(stored[b"d"])
        assert doc["f"] == 2
        state = doc["state"]
        assert state["v"] == 2 and state["players"] == 2 and state["seed"] == doc["seed"]
        assert state["options"] == doc["options"] and "results" not in state
        hands = [cards_from_codes(h.split()) for h in state["round"]["hands"]]  # codes
        assert [len(h) for h in hands] == [p["hand_size"] for p in game.public()["players"]]
        assert all(isinstance(row[2], list) for row in doc["arr"])
        assert orjson.loads(stored[b"r"]) == before["results"]
        play_on(game, 6)
    game.client = make_app(redis_url).test_client()
    assert game.public()["version"] == before["version"] + 7


def test_a_format_1_game_is_served_and_its_next_write_moves_the_results_apart(client, redis_client):
    game = scored_game(client, "format-1")
    before = game.public()
    seats = seat_views(game)
    state_key = key(game.id, "state")
    assert orjson.loads(redis_client.hget(state_key, "d"))["f"] == 3
    assert "results" not in orjson.loads(redis_client.hget(state_key, "p"))

    as_format_1(redis_client, game.id)
    assert game.public() == before
    assert seat_views(game) == seats

    seat = before["round"]["turn"]
    assert game.move(seat, seats[seat]["legal_moves"][0]).status_code == 200
    assert orjson.loads(redis_client.hget(state_key, "d"))["f"] == 3
    assert orjson.loads(redis_client.hget(state_key, "r")) == before["results"]
    after = game.public()
    assert after["results"] == before["results"]
    assert after["version"] == before["version"] + 1


def test_game_format_1_writes_what_the_previous_release_reads(redis_client, redis_url):
    """``GAME_FORMAT=1`` (a rolling upgrade from a release that reads only format 1):
    documents with their results inside, a complete saved public view, and the
    results a format 2 write stored apart dropped, so no reader sees them twice."""
    game = scored_game(make_app(redis_url).test_client(), "format-1")
    state_key = key(game.id, "state")
    assert redis_client.hexists(state_key, "r")
    with writing(1):
        game.client = make_app(redis_url, GAME_FORMAT="1").test_client()
        before = game.public()
        seat = before["round"]["turn"]
        assert game.move(seat, game.view(seat)["legal_moves"][0]).status_code == 200
        stored = redis_client.hgetall(state_key)
        assert b"r" not in stored
        doc = orjson.loads(stored[b"d"])
        assert doc["f"] == 1
        assert orjson.loads(doc["state"]["results"]) == before["results"]
        saved_public = orjson.loads(stored[b"p"])
        assert saved_public["results"] == before["results"]
        assert saved_public == game.public()
        play_on(game, 6)  # and play goes on
    game.client = make_app(redis_url).test_client()
    assert game.public()["version"] == before["version"] + 7


def test_a_game_saved_without_a_public_view_is_still_viewed(client, redis_client):
    """The oldest releases saved no public view beside the document: both views are
    then built from the document (and the next write saves one)."""
    game = scored_game(client, "no-public")
    public, seats = game.public(), seat_views(game)
    redis_client.hdel(key(game.id, "state"), "p")
    assert game.public() == public
    assert seat_views(game) == seats
