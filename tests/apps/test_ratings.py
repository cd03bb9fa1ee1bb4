"""Players' ratings (issue 44), on the test Redis in apps mode: how a finished game
moves them (openskill's Plackett-Luce model: lowest total first, resigned seats last,
bots fixed anchors, seat-token seats unknowns never stored), and that a game counts
exactly once -- the archiving step run again, by two archivers at once, by a worker
killed between one player's change and the next, or after another game moved a
rating meanwhile."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.hosting import archiving, fair_play, rating_updates
from service.hosting.archiving import archive_game, unpack
from service.hosting.rating_updates import BOT_ANCHORS, MODEL, rate_game
from service.hosting.ratings import DEFAULT, Rating, current_rating
from service.hosting.record import GameRecord
from service.store import GameStore, connect
from service.store import keys as store_keys
from service.store.archives import FinishedGames
from tests.api.conftest import make_app
from tests.apps.conftest import AppKey, bearer, mint, two_player_game
from tests.apps.test_apps_mode import QUICK, choose, play_to_the_end
from tests.apps.test_archives import LEASE_MS, finished_game, run_step

ROOT = Path(__file__).resolve().parents[2]


def rating(store: GameStore, app: AppKey, player_id: str, size: int = 2) -> Rating:
    return current_rating(store, app.id, "classic", size, player_id)


def expected_after(before: list[tuple[float, float]], totals: list[int]) -> list[Any]:
    """openskill's own answer for seats of ``before`` ratings finishing with ``totals``."""
    teams = [[MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    ranks = [1 + sum(1 for other in totals if other < t) for t in totals]
    return [team[0] for team in MODEL.rate(teams, ranks=[float(r) for r in ranks])]


def totals_of(store: GameStore, game_id: str) -> list[int]:
    archive = unpack(store.archives.load(game_id) or b"")
    return list(archive["replay"]["totals"])


def record_of(store: GameStore, game_id: str) -> GameRecord:
    found = store.load_game(game_id)
    assert found is not None
    return GameRecord.loaded(found[1], found[2])


def ready(apps_app: Flask, apps_client: FlaskClient, new_app: Any) -> tuple[AppKey, str, str, Any]:
    app = new_app("cards")
    ann, bob = mint(apps_client, app, "u1", "ann"), mint(apps_client, app, "u2", "bob")
    return app, ann, bob, apps_app.extensions["t13"].config


def test_a_finished_game_moves_its_two_players_ratings_once(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore
) -> None:
    app, ann, bob, config = ready(apps_app, apps_client, new_app)
    game_id = finished_game(apps_client, app, ann, bob)
    assert rating(store, app, "u1") == DEFAULT  # not before the game is archived
    assert run_step(store, config, game_id)
    totals = totals_of(store, game_id)
    want = expected_after([(DEFAULT.mu, DEFAULT.sigma)] * 2, totals)
    ann_now, bob_now = rating(store, app, "u1"), rating(store, app, "u2")
    assert (ann_now.games, bob_now.games) == (1, 1)
    assert ann_now.mu == pytest.approx(want[0].mu) and ann_now.sigma == pytest.approx(want[0].sigma)
    assert bob_now.mu == pytest.approx(want[1].mu) and bob_now.sigma == pytest.approx(want[1].sigma)
    if totals[0] != totals[1]:  # the lower total wins: up; the other down
        winner, loser = (ann_now, bob_now) if totals[0] < totals[1] else (bob_now, ann_now)
        assert winner.mu > DEFAULT.mu > loser.mu
        assert winner.displayed > loser.displayed
    assert ann_now.sigma < DEFAULT.sigma and bob_now.sigma < DEFAULT.sigma
    # each player's history says how its rating moved
    entry = apps_client.get("/v1/me/history", headers=bearer(ann)).get_json()["games"][0]
    assert entry["rating"]["before"] == pytest.approx(0.0)
    assert entry["rating"]["after"] == pytest.approx(ann_now.displayed)
    # the step again, and again: nothing changes
    for _ in range(2):
        assert archive_game(store, config, game_id) is not None
    assert rating(store, app, "u1") == ann_now and rating(store, app, "u2") == bob_now
    # the other pools, and the other app's u1, are untouched
    assert rating(store, app, "u1", size=3) == DEFAULT
    assert current_rating(store, new_app("other").id, "classic", 2, "u1") == DEFAULT


def test_two_archivers_at_once_count_a_game_once(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore
) -> None:
    app, ann, bob, config = ready(apps_app, apps_client, new_app)
    games = [finished_game(apps_client, app, ann, bob) for _ in range(3)]
    failures: list[BaseException] = []
    for game_id in games:
        start = threading.Barrier(4)

        def archiver(game_id: str = game_id, start: threading.Barrier = start) -> None:
            client = connect(config)  # each its own connections, as another process
            try:
                start.wait()
                archive_game(GameStore(client, config=config), config, game_id)
            except BaseException as exc:  # reported below
                failures.append(exc)
            finally:
                client.close()

        threads = [threading.Thread(target=archiver) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert failures == []
    assert rating(store, app, "u1").games == 3 and rating(store, app, "u2").games == 3
    # what was applied is what the archives (written once) say, game after game
    mu = {0: DEFAULT.mu, 1: DEFAULT.mu}
    for game_id in games:
        changes = unpack(store.archives.load(game_id) or b"")["ratings"]["seats"]
        for seat, change in enumerate(changes):
            assert change["mu"] == pytest.approx(mu[seat])
            mu[seat] = change["mu_after"]
    assert rating(store, app, "u1").mu == pytest.approx(mu[0])
    assert rating(store, app, "u2").mu == pytest.approx(mu[1])


KILLED_AFTER_ONE_APPLY = """
import os, signal, sys
from service.config import Config
from service.hosting.archiving import archive_game
from service.store import GameStore
from service.store.ratings import PlayerRatings

applying = PlayerRatings.apply

def apply_then_die(self, *args, **kwargs):
    applying(self, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)  # the worker dies: the next player's change is not made

PlayerRatings.apply = apply_then_die
config = Config.from_env({"REDIS_URL": sys.argv[1]})
archive_game(GameStore.from_config(config), config, sys.argv[2])
"""


def test_a_worker_killed_between_two_players_changes_loses_nor_doubles_any(
    apps_app: Flask,
    apps_client: FlaskClient,
    new_app: Any,
    store: GameStore,
    redis_url: str,
) -> None:
    app, ann, bob, config = ready(apps_app, apps_client, new_app)
    game_id = finished_game(apps_client, app, ann, bob)
    queue, slot = FinishedGames(store.client), store_keys.slot_of(game_id)
    now = int(time.time() * 1000)
    taken, _ = queue.claim(slot, now, LEASE_MS, 10)
    assert [claimed for claimed, _due in taken] == [game_id]
    died = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_ONE_APPLY, redis_url, game_id],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=120,
    )
    assert died.returncode == -9, died.stderr.decode()
    assert store.archives.load(game_id) is not None  # the archive, then one player's change
    assert [rating(store, app, p).games for p in ("u1", "u2")] == [1, 0]
    assert queue.queued(game_id) == now + LEASE_MS  # its entry stays, claimed
    # another worker, once the lease ended: the other player's change, once each
    assert run_step(store, config, game_id, now + LEASE_MS)
    assert queue.queued(game_id) is None
    first = [rating(store, app, p) for p in ("u1", "u2")]
    assert [r.games for r in first] == [1, 1]
    changes = unpack(store.archives.load(game_id) or b"")["ratings"]["seats"]
    for now_rating, change in zip(first, changes, strict=True):
        assert now_rating.mu == pytest.approx(change["mu_after"])
    assert archive_game(store, config, game_id) is not None
    assert [rating(store, app, p) for p in ("u1", "u2")] == first


def test_a_worker_dead_before_its_archive_leaves_the_changes_to_the_next_run(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore
) -> None:
    """Changes computed but no archive written: nothing was applied, and the next
    run computes them anew, from the ratings then."""
    app, ann, bob, config = ready(apps_app, apps_client, new_app)
    first = finished_game(apps_client, app, ann, bob)
    second = finished_game(apps_client, app, ann, bob)
    assert rate_game(store, record_of(store, first)) is not None  # then the worker dies
    assert run_step(store, config, second)
    after_second = rating(store, app, "u1")
    assert run_step(store, config, first)
    stored = unpack(store.archives.load(first) or b"")["ratings"]
    change = stored["seats"][0]
    assert change["mu"] == pytest.approx(after_second.mu)  # computed when archived
    now = rating(store, app, "u1")
    assert now.games == 2
    assert now.mu == pytest.approx(after_second.mu + change["mu_after"] - change["mu"])


def test_a_change_is_a_delta_over_a_rating_another_game_moved_meanwhile(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore
) -> None:
    app, ann, bob, config = ready(apps_app, apps_client, new_app)
    first = finished_game(apps_client, app, ann, bob)
    second = finished_game(apps_client, app, ann, bob)
    # the first game's archive written (its changes computed from the default
    # ratings), the worker stalls before applying them
    assert archive_game_without_ratings_applied(store, config, first)
    assert run_step(store, config, second)
    between = rating(store, app, "u1")
    assert run_step(store, config, first)
    changes = unpack(store.archives.load(first) or b"")["ratings"]["seats"]
    assert changes[0]["mu"] == DEFAULT.mu and changes[0]["sigma"] == DEFAULT.sigma
    now = rating(store, app, "u1")
    assert now.games == 2
    assert now.mu == pytest.approx(between.mu + changes[0]["mu_after"] - DEFAULT.mu)
    assert now.sigma == pytest.approx(between.sigma * changes[0]["sigma_after"] / DEFAULT.sigma)


def archive_game_without_ratings_applied(store: GameStore, config: Any, game_id: str) -> bool:
    """The archiving step up to its archive (a worker that stalls there)."""
    record = record_of(store, game_id)
    replay = fair_play.replay_text(store, record)
    finished = store.archives.finished_at(game_id) or int(time.time() * 1000)
    built = archiving.build_archive(record, replay, finished, rate_game(store, record))
    return store.archives.save(game_id, archiving.pack(built), config.archive_ttl_seconds)


def test_a_resigned_player_ranks_last_whatever_its_total(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore
) -> None:
    app, ann, bob, _config = ready(apps_app, apps_client, new_app)
    record = record_of(store, finished_game(apps_client, app, ann, bob))
    assert record.state is not None
    low = min(range(2), key=lambda s: record.state.totals[s])  # type: ignore[union-attr]
    record.seats[low].resigned = True  # its player resigned (a bot played it out)
    rated = rate_game(store, record)
    assert rated is not None
    ranks = [seat["rank"] for seat in rated["seats"]]
    assert ranks[low] == 2 and ranks[1 - low] == 1
    assert rated["seats"][low]["mu_after"] < DEFAULT.mu < rated["seats"][1 - low]["mu_after"]
    # a seat on autopilot is its player's, rated by its total
    record.seats[low].resigned = False
    record.seats[low].autopilot, record.seats[low].bot = True, "basic"
    assert rating_updates.seat_kind(record, low) == rating_updates.PLAYER
    on_autopilot = rate_game(store, record)
    assert on_autopilot is not None and on_autopilot["seats"][low]["rank"] == 1
    # both resigned: they tie
    record.seats[low].resigned = True
    record.seats[1 - low].resigned = True
    both = rate_game(store, record)
    assert both is not None and [s["rank"] for s in both["seats"]] == [1, 1]
    assert rating_updates.ranks([3, 50, 7, 7], [False, True, False, True]) == [1, 3, 2, 3]


def play_humans(client: FlaskClient, game_id: str, devices: dict[int, str]) -> None:
    """Play ``game_id``'s human seats (``devices``: seat -> token) to its end, the
    bot worker playing the others."""
    auth = bearer(next(iter(devices.values())))
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        public = client.get(f"/v1/games/{game_id}", headers=auth).get_json()
        if public["status"] == "finished":
            return
        seat = public["round"]["turn"]
        if seat not in devices:
            time.sleep(0.01)  # a bot's turn
            continue
        view = client.get(f"/v1/games/{game_id}/view", headers=bearer(devices[seat]))
        if view.status_code != 200:
            continue
        client.post(
            f"/v1/games/{game_id}/moves",
            json=choose(view.get_json()),
            headers=bearer(devices[seat]),
        )  # a 409 when the turn passed meanwhile (the bot worker): look again
    raise AssertionError("the game did not finish")


def archived(store: GameStore, game_id: str) -> dict[str, Any]:
    """The archive of ``game_id`` once the bot worker's archiver removed its entry."""
    deadline = time.monotonic() + 30
    while FinishedGames(store.client).queued(game_id) is not None:
        assert time.monotonic() < deadline, "not archived"
        time.sleep(0.05)
    return unpack(store.archives.load(game_id) or b"")


def test_bots_are_fixed_anchors_and_seat_tokens_unknowns_neither_stored(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore, bots_for: Any
) -> None:
    bots_for(apps_app)  # plays the bots' turns, and archives what finishes
    app, ann, _bob, _config = ready(apps_app, apps_client, new_app)
    body = {
        "players": [
            {"name": "ann", "player_id": "u1"},
            {"name": "expert", "bot": "expert"},
            {"name": "guest"},  # a seat token's: no player_id
        ],
        **QUICK,
    }
    created = apps_client.post("/v1/games", json=body, headers=app.auth)
    assert created.status_code == 201, created.get_json()
    game_id = created.get_json()["id"]
    guest = next(p["token"] for p in created.get_json()["players"] if p["seat"] == 2)
    play_humans(apps_client, game_id, {0: ann, 2: guest})
    archive = archived(store, game_id)
    seats = archive["ratings"]["seats"]
    assert [s["kind"] for s in seats] == ["player", "bot", "anonymous"]
    assert (seats[1]["mu"], seats[1]["sigma"]) == BOT_ANCHORS["expert"]
    assert (seats[2]["mu"], seats[2]["sigma"]) == (DEFAULT.mu, DEFAULT.sigma)
    assert "mu_after" not in seats[1] and "mu_after" not in seats[2]
    want = expected_after([(s["mu"], s["sigma"]) for s in seats], archive["replay"]["totals"])
    ann_now = rating(store, app, "u1", size=3)
    assert ann_now.games == 1 and ann_now.mu == pytest.approx(want[0].mu)
    # one player's ratings stored, nobody else's
    stored = list(store.client.scan_iter(match="t13:player:*:ratings"))
    assert len(stored) == 1
    assert BOT_ANCHORS["expert"] == (28.25, 1.0)  # never moved


def test_a_resigned_player_of_a_played_game_loses_rating(
    apps_app: Flask, apps_client: FlaskClient, new_app: Any, store: GameStore, bots_for: Any
) -> None:
    bots_for(apps_app)
    app, ann, bob, _config = ready(apps_app, apps_client, new_app)
    game_id = two_player_game(apps_client, app, **QUICK)["id"]
    assert apps_client.post(f"/v1/games/{game_id}/resign", headers=bearer(ann)).status_code == 200
    play_humans(apps_client, game_id, {1: bob})
    archive = archived(store, game_id)
    assert [s["rank"] for s in archive["ratings"]["seats"]] == [2, 1]
    assert archive["seats"][0]["resigned"] and not archive["seats"][1]["resigned"]
    assert rating(store, app, "u1").mu < DEFAULT.mu < rating(store, app, "u2").mu


def test_unfinished_aborted_and_open_mode_games_are_not_rated(
    apps_app: Flask,
    apps_client: FlaskClient,
    new_app: Any,
    store: GameStore,
    redis_client: Any,
    redis_url: str,
) -> None:
    app, _ann, _bob, config = ready(apps_app, apps_client, new_app)
    playing = two_player_game(apps_client, app, **QUICK)["id"]
    assert archive_game(store, config, playing) is None
    assert rate_game(store, record_of(store, playing)) is None
    aborted = two_player_game(apps_client, app, **QUICK)["id"]
    answer = apps_client.post(f"/v1/games/{aborted}/abort", json={}, headers=app.auth)
    assert answer.status_code == 200
    assert archive_game(store, config, aborted) is None
    assert rating(store, app, "u1") == DEFAULT and rating(store, app, "u2") == DEFAULT
    # a game of no app (open mode): archived, not rated
    open_client = make_app(redis_url).test_client()
    body = {"players": [{"name": "ann"}, {"name": "bob"}], **QUICK}
    created = open_client.post("/v1/games", json=body).get_json()
    tokens = {p["seat"]: [p["token"]] for p in created["players"]}
    play_to_the_end(open_client, created["id"], tokens)
    archive = archive_game(store, config, created["id"])
    assert archive is not None and archive["ratings"] is None
    assert list(store.client.scan_iter(match="t13:player:*:ratings")) == []
