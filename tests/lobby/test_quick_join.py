"""Quick-join, one client at a time: the oldest fitting game first, a new listed
game when none fits, what fits, bad requests, and stale index entries that must
never seat anyone in a full game."""

from __future__ import annotations

import time
import uuid

import pytest

from service.hosting.lobby_operations import record_table, table_of
from service.hosting.record import GameRecord
from tests.api.conftest import create_game
from tests.lobby.conftest import join, listed_game, quick_join


def test_the_oldest_fitting_game_first_then_a_new_one(client):
    older = listed_game(client, seats=2)
    newer = listed_game(client, seats=2)
    first = quick_join(client, "q1")
    assert (first["id"], first["seat"], first["created"]) == (older.id, 1, False)
    assert first["status"] == "playing" and first["version"] == 2
    assert quick_join(client, "q2")["id"] == newer.id
    made = quick_join(client, "q3")
    assert made["created"] and made["seat"] == 0 and made["status"] == "waiting"
    public = client.get(f"/v1/games/{made['id']}").get_json()
    assert public["listed"] and public["players"][0]["name"] == "q3"
    view = client.get(
        f"/v1/games/{made['id']}/view", headers={"Authorization": f"Bearer {made['token']}"}
    )
    assert view.get_json()["seat"] == 0


def test_only_games_of_the_same_table_fit(client):
    listed_game(client, seats=3)
    listed_game(client, seats=2, ruleset="finnish")
    listed_game(client, seats=2, options={"lay_off": True})
    listed_game(client, seats=2, turn_timeout_seconds=30)
    create_game(client, [{"name": "a"}], seats=2)  # unlisted
    answer = quick_join(client, "q", seats=2)
    assert answer["created"], "none of them is a classic 2-seat game with the default timers"
    timed = quick_join(client, "t", seats=2, turn_timeout_seconds=30)
    assert not timed["created"]
    default = listed_game(client, seats=2, turn_timeout_seconds=60, autopilot_after_missed_turns=2)
    assert quick_join(client, "d", seats=2)["id"] in (answer["id"], default.id), (
        "a table asking for the default timers is the table asking for none"
    )
    assert quick_join(client, "o", seats=2, options={"lay_off": True})["created"] is False


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "name"),
        ({"name": "q", "seats": 1}, "seats"),
        ({"name": "q", "seats": "4"}, "seats"),
        ({"name": "q", "ruleset": "poker"}, "ruleset"),
        ({"name": "q", "options": {"jokers_per_deck": 99}}, "jokers_per_deck"),
        ({"name": "q", "turn_timeout_seconds": 1}, "turn_timeout_seconds"),
        ({"name": "q", "colour": "red"}, "colour"),
    ],
)
def test_bad_quick_joins_are_422_and_change_nothing(client, redis_client, body, field):
    answer = client.post("/v1/lobby/quick-join", json=body)
    assert answer.status_code == 422, answer.get_json()
    assert field in answer.get_json()["errors"]
    assert client.get("/v1/games").get_json()["games"] == []


def test_a_stale_entry_never_seats_anyone_in_a_full_game(client, app):
    """The table's index says a full game has three seats to offer (as after a
    failure between the game's write and the index's): quick-join tries it, the
    game refuses, the entry goes, and the client is seated in a new game."""
    game = listed_game(client, seats=2)
    assert join(client, game, "b").status_code == 201
    before = game.public()
    store = app.extensions["t13"].store
    record = GameRecord.loaded(*store.load_game(game.id)[1:])
    store.lobby.offer(record_table(record), game.id, record.created_at, 3, 3600)
    answer = quick_join(client, "q")
    assert answer["id"] != game.id and answer["created"]
    assert game.public() == before, "the full game is unchanged"
    assert quick_join(client, "r")["id"] == answer["id"], "the stale entry is gone"


def test_a_vanished_game_in_the_table_is_dropped(client, app, redis_client):
    """A game listed two minutes ago and gone since (expired) is not made again."""
    game = listed_game(client, seats=2)
    store = app.extensions["t13"].store
    record = GameRecord.loaded(*store.load_game(game.id)[1:])
    store.lobby.offer(record_table(record), game.id, time.time() - 120, 1, 3600)
    redis_client.delete(f"t13:{{{game.id}}}:state")
    answer = quick_join(client, "q")
    assert answer["created"] and answer["id"] != game.id
    assert client.get(f"/v1/games/{game.id}").status_code == 404


def test_a_new_game_is_made_by_whichever_ticket_holder_comes_first(client, app):
    """The table lists a new game before anyone made it: the first ticket holder
    to find it missing makes it, and it is seated there like the others."""
    store = app.extensions["t13"].store
    table = table_of("classic", {}, 2, 60, 2)  # a quick-join's table: the lobby's timers
    lister = store.lobby.seek(table, 3600, "fresh-game", 2, "r1", 60)
    assert lister.new and lister.game == "fresh-game"
    assert store.lobby.seek(table, 3600, "other", 2, "r1", 60) == lister, "a retried call"
    answer = quick_join(client, "second")  # takes the other seat first, and makes the game
    assert (answer["id"], answer["seat"], answer["created"]) == ("fresh-game", 0, False)
    assert [e["type"] for e in client.get("/v1/games/fresh-game/events").get_json()["events"]] == [
        "game_created",
        "player_joined",
    ]
    assert client.get("/v1/games").get_json()["games"][0]["id"] == "fresh-game"


def test_quick_join_answers_a_location_and_the_version(client):
    answer = client.post("/v1/lobby/quick-join", json={"name": "q"})
    assert answer.status_code == 201
    assert answer.headers["Location"].endswith(f"/v1/games/{answer.get_json()['id']}")
    assert answer.headers["ETag"].startswith(f'"{answer.get_json()["version"]}.')


def test_an_idle_table_expires(client, app, redis_client):
    quick_join(client, "q")
    table_keys = redis_client.keys("t13:seek:*")
    assert table_keys and all(0 < redis_client.pttl(k) <= 3600_000 for k in table_keys)


def test_a_keyed_quick_join_is_answered_the_same_seat_again(client):
    listed_game(client, seats=3)
    for maker in (False, True):  # a seat in a listed game, then in a game it makes
        key = {"Idempotency-Key": str(uuid.uuid4())}
        body = {"name": f"k{maker}", "seats": 2 if maker else 3}
        first = client.post("/v1/lobby/quick-join", json=body, headers=key)
        again = client.post("/v1/lobby/quick-join", json=body, headers=key)
        assert first.status_code == again.status_code == 201
        assert first.get_json()["created"] is maker
        assert again.get_json() == first.get_json()
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.headers["Location"] == first.headers["Location"]
        other = client.post("/v1/lobby/quick-join", json={**body, "name": "x"}, headers=key)
        assert other.status_code == 422 and other.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"
    names = [p["name"] for e in client.get("/v1/games").get_json()["games"] for p in e["players"]]
    assert sorted(names) == ["h0", "kFalse", "kTrue"], "each keyed client seated once"


def test_a_quick_join_key_must_be_random(client):
    answer = client.post(
        "/v1/lobby/quick-join", json={"name": "q"}, headers={"Idempotency-Key": "join-1"}
    )
    assert answer.status_code == 400 and answer.get_json()["code"] == "WEAK_IDEMPOTENCY_KEY"
    assert client.get("/v1/games").get_json()["games"] == []
