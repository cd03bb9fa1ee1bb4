"""``GET /v1/games``: listed games only, newest first, filtered, paged without
repeats or gaps while games are created, entries that expire or go stale."""

from __future__ import annotations

import threading
import time

import pytest

from service.store import lobby_index as lobby_store
from tests.api.conftest import create_game, make_app
from tests.lobby.conftest import ids, join, list_all, listed_game, quick_join


def test_unlisted_games_are_never_listed(client):
    hidden = [
        create_game(client, [{"name": "a"}], seats=2),  # waiting
        create_game(client, [{"name": "a"}, {"name": "b"}]),  # playing
        create_game(client, [{"name": "a"}], seats=3, listed=False),
    ]
    shown = listed_game(client)
    quick = quick_join(client, "q")
    everything = [e for status in ("waiting", "playing", "finished")
                  for e in list_all(client, status=status)]  # fmt: skip
    assert sorted(ids(everything)) == sorted([shown.id, quick["id"]])
    assert not {g.id for g in hidden} & set(ids(everything))
    assert quick_join(client, "r", seats=3)["id"] == shown.id  # quick-join offers listed only


def test_an_entry_is_a_short_summary_newest_first(client):
    older = listed_game(client, seats=3, humans=2)
    newer = listed_game(client, seats=2, ruleset="finnish")
    entries = list_all(client)
    assert ids(entries) == [newer.id, older.id]
    entry = entries[1]
    assert entry["seats"] == {"total": 3, "taken": 2, "open": [2]}
    assert entry["players"] == [
        {"seat": 0, "name": "h0", "bot": None},
        {"seat": 1, "name": "h1", "bot": None},
    ]
    assert entry["status"] == "waiting" and entry["ruleset"] == "classic"
    assert entry["options"] == older.public()["options"]
    assert entry["version"] == 1 and entry["created_at"] <= entries[0]["created_at"]


def test_filters(client):
    classic3 = listed_game(client, seats=3)
    finnish3 = listed_game(client, seats=3, ruleset="finnish")
    classic2 = listed_game(client, seats=2)
    assert ids(list_all(client, ruleset="finnish")) == [finnish3.id]
    assert ids(list_all(client, seats=3)) == [finnish3.id, classic3.id]
    assert ids(list_all(client, ruleset="classic", seats=2)) == [classic2.id]
    assert list_all(client, status="playing") == []


@pytest.mark.parametrize(
    "query",
    ["status=bogus", "status=cancelled", "seats=1", "seats=9", "seats=two", "ruleset=nope",
     "limit=0", "limit=101", "cursor=zzz", "colour=red"],
)  # fmt: skip
def test_bad_filters_are_422_problems(client, query):
    answer = client.get(f"/v1/games?{query}")
    assert answer.status_code == 422
    assert answer.content_type == "application/problem+json"
    assert answer.get_json()["code"] == "VALIDATION_ERROR"
    assert set(answer.get_json()["errors"]) == {query.split("=")[0]}


@pytest.mark.parametrize("scan", [lobby_store.SCAN_PER_SHARD, 2])
def test_pages_never_repeat_nor_skip_while_games_are_created(
    redis_client, redis_url, monkeypatch, scan
):
    """A reader pages through 60 games (limit 4; 1 in 3 matches its filter) while
    two other app instances keep creating listed games: it sees each game that
    existed when it started exactly once, newest first.  With ``scan`` 2 every
    shard stops early on every page, so the pages end at the shards' floors."""
    monkeypatch.setattr(lobby_store, "SCAN_PER_SHARD", scan)
    apps = [make_app(redis_url) for _ in range(3)]
    reader = apps[0].test_client()
    before = [listed_game(reader, seats=2 + i % 3).id for i in range(60)]
    stop = threading.Event()
    made: list[str] = []

    def create(app) -> None:
        client = app.test_client()
        while not stop.is_set():
            made.append(listed_game(client, seats=2 + len(made) % 3).id)

    writers = [threading.Thread(target=create, args=(app,)) for app in apps[1:]]
    for writer in writers:
        writer.start()
    try:
        seen = list_all(reader, seats=3, limit=4)
    finally:
        stop.set()
        for writer in writers:
            writer.join()
    assert len(made) > 5, "games were created while the reader paged"
    assert len(ids(seen)) == len(set(ids(seen))), "no game given twice"
    expected = [g for i, g in enumerate(before) if i % 3 == 1]
    assert set(expected) <= set(ids(seen)), "no game skipped"
    assert set(ids(seen)) <= set(expected) | set(made)
    keys = [(e["created_at"], e["id"]) for e in seen]
    assert keys == sorted(keys, reverse=True), "newest first"


def test_a_game_moves_to_the_listing_of_its_status(client):
    game = listed_game(client, seats=2)
    assert ids(list_all(client)) == [game.id]
    assert join(client, game, "b").status_code == 201
    assert list_all(client) == []
    [entry] = list_all(client, status="playing")
    assert entry["id"] == game.id and entry["seats"]["taken"] == 2


def test_a_stale_entry_is_moved_by_the_listing(client, app):
    game = listed_game(client, seats=2)
    join(client, game, "b")
    created = list_all(client, status="playing")[0]["created_at"]
    store = app.extensions["t13"].store
    store.lobby.put("waiting", game.id, created, "classic", 2, time.time() + 60)  # stale
    assert list_all(client) == []
    assert ids(list_all(client, status="playing")) == [game.id]
    assert list_all(client) == [], "the stale entry is gone"


def test_an_entry_ahead_of_its_game_is_skipped_and_kept(client, app):
    """Listed under ``playing`` before the write that would start it (which then
    failed): not shown, not moved, shown once the game does start."""
    game = listed_game(client, seats=2)
    created = list_all(client)[0]["created_at"]
    store = app.extensions["t13"].store
    store.lobby.put("playing", game.id, created, "classic", 2, time.time() + 60)
    assert list_all(client, status="playing") == []
    assert ids(list_all(client)) == [game.id]
    join(client, game, "b")
    assert ids(list_all(client, status="playing")) == [game.id]


def test_a_gone_game_leaves_the_listing(client, redis_client):
    game = listed_game(client)
    redis_client.delete(f"t13:{{{game.id}}}:state")  # as when a game expires
    assert list_all(client) == []


def test_unfilled_games_expire_from_the_lobby(redis_client, redis_url):
    client = make_app(redis_url, LOBBY_WAITING_SECONDS="1").test_client()
    old = listed_game(client, seats=2)
    quick = quick_join(client, "q", seats=3)
    assert sorted(ids(list_all(client))) == sorted([old.id, quick["id"]])
    time.sleep(1.1)
    assert list_all(client) == []
    fresh = quick_join(client, "late", seats=3)
    assert fresh["created"] and fresh["id"] != quick["id"], "quick-join skips expired games"
    assert ids(list_all(client)) == [fresh["id"]]
    assert join(client, old, "by-id").status_code == 201, "still reachable by its id"


def test_listing_and_quick_join_are_rate_limited(redis_client, redis_url):
    client = make_app(
        redis_url, RATE_LIMITS="true", RATE_LIMIT_LIST="2/minute", RATE_LIMIT_QUICK_JOIN="1/minute"
    ).test_client()
    assert [client.get("/v1/games").status_code for _ in range(3)] == [200, 200, 429]
    first = client.post("/v1/lobby/quick-join", json={"name": "a"})
    second = client.post("/v1/lobby/quick-join", json={"name": "b"})
    assert (first.status_code, second.status_code) == (201, 429)
    assert second.get_json()["code"] == "RATE_LIMITED" and second.headers["Retry-After"]
