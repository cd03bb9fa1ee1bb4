"""Finished games' archives and players' histories (issue 44's first part), on the test
Redis in apps mode: archived once whoever runs the step, the replay served from the
archive once the live keys are gone, histories paged newest first, per app."""

from __future__ import annotations

import time
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from service.hosting.archiving import archive_game, unpack
from service.hosting.players import player_holder
from service.store import GameStore
from service.store import keys as store_keys
from service.store.archives import FinishedGames
from tests.api.conftest import make_app
from tests.apps.conftest import AppKey, bearer, mint, two_player_game
from tests.apps.test_apps_mode import QUICK, play_to_the_end

LEASE_MS = 30_000


def finished_game(client: FlaskClient, app: AppKey, ann: str, bob: str) -> str:
    game_id: str = two_player_game(client, app, **QUICK)["id"]
    play_to_the_end(client, game_id, {0: [ann], 1: [bob]})
    return game_id


def run_step(store: GameStore, config: Any, game_id: str, now_ms: int | None = None) -> bool:
    """What an archiver does with one slot's entry: claim, archive, remove."""
    queue = FinishedGames(store.client)
    at = now_ms if now_ms is not None else int(time.time() * 1000)
    claimed, _next = queue.claim(store_keys.slot_of(game_id), at, LEASE_MS, 10)
    if game_id not in dict(claimed):
        return False
    assert archive_game(store, config, game_id) is not None
    assert queue.done(game_id, at + LEASE_MS)
    return True


def drop_live_keys(store: GameStore, game_id: str) -> None:
    """The live game expiring: every key of its hash tag but the archive."""
    client = store.client
    live = list(client.scan_iter(match=f"t13:{{{game_id}}}:*"))
    assert live
    client.delete(*live)


def test_a_finished_game_is_archived_once_and_its_replay_outlives_it(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore
) -> None:
    app, other = new_app("cards"), new_app("other")
    ann, bob = mint(apps_client, app, "u1", "ann"), mint(apps_client, app, "u2", "bob")
    config = apps_app.extensions["t13"].config
    game_id = finished_game(apps_client, app, ann, bob)
    queue = FinishedGames(store.client)
    assert queue.queued(game_id) is not None  # queued by the finishing write itself
    live_replay = apps_client.get(f"/v1/games/{game_id}/replay", headers=app.auth)
    assert live_replay.status_code == 200

    assert run_step(store, config, game_id)
    assert queue.queued(game_id) is None
    stored = store.archives.load(game_id)
    assert stored is not None
    archive = unpack(stored)
    assert archive["id"] == game_id and archive["replay"] == live_replay.get_json()
    assert [s["name"] for s in archive["seats"]] == ["ann", "bob"]
    history = apps_client.get("/v1/me/history", headers=bearer(ann)).get_json()

    # the step again (a retry, another worker): nothing changes
    assert archive_game(store, config, game_id) is not None
    assert store.archives.load(game_id) == stored
    assert apps_client.get("/v1/me/history", headers=bearer(ann)).get_json() == history
    assert history["next"] is None and len(history["games"]) == 1
    entry = history["games"][0]
    assert entry["id"] == game_id and entry["seat"] == 0 and entry["players"] == ["ann", "bob"]
    assert entry["table_size"] == 2 and entry["totals"] == live_replay.get_json()["totals"]
    assert entry["winners"] == live_replay.get_json()["winners"]
    bobs = apps_client.get("/v1/me/history", headers=bearer(bob)).get_json()["games"]
    assert [g["seat"] for g in bobs] == [1]
    # a worker that died after the archive, before a history: the next run writes it
    ann_holder = player_holder(app.id, "u1")
    store.client.delete(*(store_keys.history_key(ann_holder, p) for p in ("games", "entries")))
    assert apps_client.get("/v1/me/history", headers=bearer(ann)).get_json()["games"] == []
    assert archive_game(store, config, game_id) is not None
    assert apps_client.get("/v1/me/history", headers=bearer(ann)).get_json() == history

    drop_live_keys(store, game_id)
    assert apps_client.get(f"/v1/games/{game_id}", headers=app.auth).status_code == 404
    for auth in (app.auth, bearer(ann), bearer(bob)):
        archived = apps_client.get(f"/v1/games/{game_id}/replay", headers=auth)
        assert archived.status_code == 200, archived.get_json()
        assert archived.get_json() == live_replay.get_json()
    refused = apps_client.get(f"/v1/games/{game_id}/replay", headers=other.auth)
    assert refused.status_code == 404
    store.client.delete(store_keys.archive_key(game_id))
    gone = apps_client.get(f"/v1/games/{game_id}/replay", headers=app.auth)
    assert gone.status_code == 404 and gone.get_json()["code"] == "GAME_NOT_FOUND"


def test_a_players_history_is_paged_newest_first_and_its_apps_alone(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore
) -> None:
    app, other = new_app("cards"), new_app("other")
    ann, bob = mint(apps_client, app, "u1", "ann"), mint(apps_client, app, "u2", "bob")
    config = apps_app.extensions["t13"].config
    games = []
    for _ in range(3):
        games.append(finished_game(apps_client, app, ann, bob))
        time.sleep(0.002)  # finished in distinct milliseconds (ties are ordered by id)
    for game_id in games:
        assert run_step(store, config, game_id)
    first = apps_client.get("/v1/me/history?limit=2", headers=bearer(ann)).get_json()
    assert [g["id"] for g in first["games"]] == games[::-1][:2]
    assert first["next"] is not None
    second = apps_client.get(
        f"/v1/me/history?limit=2&cursor={first['next']}", headers=bearer(ann)
    ).get_json()
    assert [g["id"] for g in second["games"]] == [games[0]] and second["next"] is None
    finished = [g["finished_at"] for g in first["games"] + second["games"]]
    assert finished == sorted(finished, reverse=True)

    by_app = apps_client.get("/v1/players/u1/history?limit=100", headers=app.auth).get_json()
    assert [g["id"] for g in by_app["games"]] == games[::-1]

    # the other app's player u1, and the other app's backend, see nothing of it
    theirs = mint(apps_client, other, "u1", "ann")
    assert apps_client.get("/v1/me/history", headers=bearer(theirs)).get_json() == {
        "games": [],
        "next": None,
    }
    assert apps_client.get("/v1/players/u1/history", headers=other.auth).get_json()["games"] == []
    # who may ask, and bad input
    assert apps_client.get("/v1/me/history", headers=app.auth).status_code == 403
    assert apps_client.get("/v1/players/u1/history", headers=bearer(ann)).status_code == 403
    assert apps_client.get("/v1/me/history").status_code == 401
    for query in ("limit=0", "limit=101", "cursor=nope", "cursor=1:g", "what=1"):
        bad = apps_client.get(f"/v1/me/history?{query}", headers=bearer(ann))
        assert bad.status_code == 422, query
        assert bad.get_json()["code"] == "VALIDATION_ERROR"


def test_a_claim_whose_worker_died_is_taken_over_and_archived_once(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore
) -> None:
    app = new_app("cards")
    ann, bob = mint(apps_client, app, "u1", "ann"), mint(apps_client, app, "u2", "bob")
    config = apps_app.extensions["t13"].config
    game_id = finished_game(apps_client, app, ann, bob)
    queue, slot = FinishedGames(store.client), store_keys.slot_of(game_id)
    now = int(time.time() * 1000)
    taken, _ = queue.claim(slot, now, LEASE_MS, 10)
    assert [claimed for claimed, _due in taken] == [game_id]  # the worker dies: nothing written
    assert queue.claim(slot, now + 1, LEASE_MS, 10) == ([], now + LEASE_MS)
    assert store.archives.load(game_id) is None
    # another worker, once the lease ended
    later = now + LEASE_MS
    assert run_step(store, config, game_id, later)
    assert not queue.done(game_id, now + LEASE_MS)  # the dead claim's end: nothing left
    assert store.archives.load(game_id) is not None
    history = apps_client.get("/v1/me/history", headers=bearer(ann)).get_json()["games"]
    assert [g["id"] for g in history] == [game_id]


def test_the_bot_workers_archiver_archives_what_finishes(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore, bots_for: Any
) -> None:
    bots_for(apps_app)
    app = new_app("cards")
    ann, bob = mint(apps_client, app, "u1", "ann"), mint(apps_client, app, "u2", "bob")
    game_id = finished_game(apps_client, app, ann, bob)
    for _ in range(200):  # woken by the finishing write's hint: well within 10 s
        if FinishedGames(store.client).queued(game_id) is None:
            break
        time.sleep(0.05)
    assert store.archives.load(game_id) is not None
    assert FinishedGames(store.client).queued(game_id) is None
    history = apps_client.get("/v1/me/history", headers=bearer(bob)).get_json()["games"]
    assert [(g["id"], g["seat"]) for g in history] == [(game_id, 1)]


def test_an_aborted_game_is_not_queued_for_an_archive(
    apps_client: FlaskClient, new_app: Any, store: GameStore
) -> None:
    app = new_app("cards")
    game_id = two_player_game(apps_client, app, **QUICK)["id"]
    aborted = apps_client.post(
        f"/v1/games/{game_id}/abort", json={"reason": "test"}, headers=app.auth
    )
    assert aborted.status_code == 200, aborted.get_json()
    assert aborted.get_json()["status"] == "aborted"
    assert FinishedGames(store.client).queued(game_id) is None
    assert archive_game(store, apps_client.application.extensions["t13"].config, game_id) is None
    assert store.archives.load(game_id) is None


def test_histories_are_of_apps_mode_alone(redis_client: Any, redis_url: str) -> None:
    client = make_app(redis_url).test_client()
    for path in ("/v1/me/history", "/v1/players/u1/history"):
        answer = client.get(path)
        assert answer.status_code == 404 and answer.get_json()["code"] == "NOT_FOUND"
