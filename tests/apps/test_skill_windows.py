"""Skill-based quick-join on the test Redis: rated players far apart are not seated
together until a table's window has widened enough; a crowd of mixed skills never
over-fills a game nor gets a seat twice; the table keeps its games' skills; bad
settings are refused.  Skills are given to :func:`matchmaking.quick_join` as the API
computes them from the players' ratings, or over HTTP from ratings set through the
ratings' store API."""

from __future__ import annotations

import math
import random
import threading
import time
import uuid
from collections import Counter, defaultdict
from typing import Any

import pytest

from service.config import Config
from service.hosting import apps, matchmaking, players
from service.hosting.lobby_operations import table_of
from service.hosting.ratings import DEFAULT_MU, DEFAULT_SIGMA, rating_tag
from service.hosting.record import GameRecord
from service.hosting.refusals import LobbyBusyError
from service.hosting.skill_window import SkillWindow
from service.store import GameStore, StoreUnavailable
from service.store.ratings import pool_name
from service.store.skill_seek import SkillAsk
from tests.apps.conftest import bearer, mint

BODY = {
    "ruleset": "classic",
    "options": {},
    "seats": 2,
    "turn_timeout_seconds": None,
    "autopilot_after_missed_turns": None,
}


@pytest.fixture
def lobby_config(redis_url: str) -> Config:
    """The test Redis, without the lobby's limits per address (one test, many players)."""
    return Config.from_env(
        {"REDIS_URL": redis_url, "LOBBY_SEATS_PER_ADDRESS": "0", "LOBBY_LISTED_PER_ADDRESS": "0"}
    )


@pytest.fixture
def app_id(store: GameStore) -> str:
    return apps.create_app_record(store.apps, "cards")[0].id


def seat(
    store: GameStore,
    config: Config,
    app_id: str,
    player: str,
    skill: SkillAsk,
    **body: Any,
) -> dict[str, Any]:
    """Quick-join ``player`` of ``app_id`` with ``skill`` (retrying LOBBY_BUSY)."""
    for _try in range(20):
        try:
            answer, _last = matchmaking.quick_join(
                store,
                config,
                {**BODY, "name": player, **body},
                None,
                address=f"10.0.0.{hash(player) % 250}",
                location=lambda game: f"/v1/games/{game}",
                app=app_id,
                holder=players.player_holder(app_id, player),
                player_id=player,
                skill=skill,
            )
            return answer
        except (LobbyBusyError, StoreUnavailable):
            time.sleep(0.05)
    raise AssertionError(f"{player} was never seated")


def assert_seated_by_level(
    store: GameStore, answers: dict[str, dict[str, Any]], levels: dict[str, Any], seats: int
) -> None:
    """Every player of ``levels`` (player -> its level) was answered a seat; no seat
    was given twice; each game holds exactly the players answered its seats, all of
    one level; and each level filled the fewest games of ``seats`` it could."""
    assert len(answers) == len(levels)
    taken = Counter((a["id"], a["seat"]) for a in answers.values())
    assert max(taken.values()) == 1, "a seat given twice"
    by_game: dict[str, list[str]] = defaultdict(list)
    for player, answer in answers.items():
        by_game[answer["id"]].append(player)
    for game_id, seated in by_game.items():
        record = GameRecord.loaded(*store.load_game(game_id)[1:])
        assert sorted(s.player_id for s in record.seats if s.name is not None) == sorted(seated)
        assert len({levels[p] for p in seated}) == 1, "players of two levels together"
    per_level = Counter(levels.values())
    games_per_level = Counter(levels[seated[0]] for seated in by_game.values())
    assert games_per_level == {lvl: math.ceil(n / seats) for lvl, n in per_level.items()}


def test_far_apart_players_are_not_seated_together_at_first(store, lobby_config, app_id):
    window = SkillWindow(1.0, 0.0, 1.0)
    low = seat(store, lobby_config, app_id, "low", window.ask("low", 10.0))
    high = seat(store, lobby_config, app_id, "high", window.ask("high", 25.0))
    assert low["created"] and high["created"] and low["id"] != high["id"]
    near = seat(store, lobby_config, app_id, "near", window.ask("near", 25.5))
    assert (near["id"], near["seat"], near["created"]) == (high["id"], 1, False)
    time.sleep(1.0)  # no widening: still apart
    far = seat(store, lobby_config, app_id, "far", window.ask("far", 25.0))
    assert far["created"] and far["id"] != low["id"]


def test_after_waiting_long_enough_they_are(store, lobby_config, app_id):
    window = SkillWindow(1.0, 20.0, 100.0)  # 15 apart: fits once the table waited 0.7 s
    low = seat(store, lobby_config, app_id, "low", window.ask("low", 10.0))
    high = seat(store, lobby_config, app_id, "high", window.ask("high", 25.0))
    assert high["created"] and high["id"] != low["id"]
    time.sleep(1.5)
    late = seat(store, lobby_config, app_id, "late", window.ask("late", 25.0))
    assert (late["id"], late["created"], late["status"]) == (low["id"], False, "playing"), (
        "the oldest table whose window now reaches the player's skill"
    )


def test_the_window_is_capped(store, lobby_config, app_id):
    window = SkillWindow(1.0, 100.0, 5.0)
    low = seat(store, lobby_config, app_id, "low", window.ask("low", 10.0))
    time.sleep(1.0)  # 1 + 100 s⁻¹ × 1 s, capped at 5
    assert seat(store, lobby_config, app_id, "mid", window.ask("mid", 14.5))["id"] == low["id"]
    other = seat(store, lobby_config, app_id, "x", window.ask("x", 10.0), seats=3)
    time.sleep(1.0)
    far = seat(store, lobby_config, app_id, "far", window.ask("far", 16.0), seats=3)
    assert far["id"] != other["id"], "6 apart is beyond the cap of 5"


def test_the_table_keeps_its_games_skills(store, lobby_config, app_id):
    window = SkillWindow(10.0, 0.0, 10.0)
    first = seat(store, lobby_config, app_id, "p1", window.ask("p1", 20.0), seats=3)
    seat(store, lobby_config, app_id, "p2", window.ask("p2", 26.0), seats=3)
    table = table_of("classic", {}, 3, 60, 2, app_id)
    assert store.lobby.skills(table, first["id"]) == {"p1": 20.0, "p2": 26.0}
    # mean 23: a player at 32 is 9 away, in the window; one at 34 would not be
    third = seat(store, lobby_config, app_id, "p3", window.ask("p3", 32.0), seats=3)
    assert third["id"] == first["id"] and third["status"] == "playing"
    assert store.lobby.skills(table, first["id"]) == {}, "a full game leaves the table"


def test_anonymous_quick_joins_fit_any_table(store, lobby_config, app_id):
    window = SkillWindow(1.0, 0.0, 1.0)
    rated = seat(store, lobby_config, app_id, "p1", window.ask("p1", 40.0), seats=3)
    anonymous, _last = matchmaking.quick_join(
        store,
        lobby_config,
        {**BODY, "name": "anon", "seats": 3},
        None,
        address="10.1.1.1",
        location=lambda game: f"/v1/games/{game}",
        app=app_id,
    )
    assert anonymous["id"] == rated["id"] and "token" in anonymous


@pytest.mark.parametrize("seats", [2, 4])
def test_a_crowd_of_mixed_skills_never_overfills_nor_mixes(store, lobby_config, app_id, seats):
    """60 players of three skill levels, released together, no widening: each level
    fills its own games exactly (no seat given twice, no game over-filled, a new game
    only when the level's others are full)."""
    levels = [10.0, 25.0, 40.0]
    rng = random.Random(7)
    skills = {f"p{i}": rng.choice(levels) for i in range(60)}
    window = SkillWindow(2.0, 0.0, 2.0)
    barrier = threading.Barrier(len(skills))
    answers: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()

    def client(player: str) -> None:
        barrier.wait()
        answer = seat(
            store, lobby_config, app_id, player, window.ask(player, skills[player]), seats=seats
        )
        with lock:
            answers[player] = answer

    threads = [threading.Thread(target=client, args=(p,)) for p in skills]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert_seated_by_level(store, answers, skills, seats)


def test_api_player_quick_join_is_rated_and_exactly_once(apps_client, new_app, store):
    """A player's quick-join over HTTP goes through the skill path (the table notes
    its skill), and a retry with the same key is answered the same seat."""
    app = new_app("cards")
    ann = mint(apps_client, app, "u1", "ann")
    key = {"Idempotency-Key": str(uuid.uuid4()), **bearer(ann)}
    first = apps_client.post("/v1/lobby/quick-join", json={"name": "ann", "seats": 3}, headers=key)
    assert first.status_code == 201, first.get_json()
    again = apps_client.post("/v1/lobby/quick-join", json={"name": "ann", "seats": 3}, headers=key)
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    game_id = first.get_json()["id"]
    table = table_of("classic", {}, 3, 60, 2, app.id)
    assert set(store.lobby.skills(table, game_id)) == {"u1"}
    bob = mint(apps_client, app, "u2", "bob")
    joined = apps_client.post(
        "/v1/lobby/quick-join", json={"name": "bob", "seats": 3}, headers=bearer(bob)
    )
    assert joined.get_json()["id"] == game_id
    assert set(store.lobby.skills(table, game_id)) == {"u1", "u2"}


def test_bad_settings_are_refused(store, app_id):
    with pytest.raises(ValueError, match="QUICKJOIN_SKILL_MAX"):
        Config.from_env({"QUICKJOIN_SKILL_MAX": "-1"})
    with pytest.raises(ValueError, match="QUICKJOIN_SKILL_WIDEN_PER_SECOND"):
        Config.from_env({"QUICKJOIN_SKILL_WIDEN_PER_SECOND": "fast"})
    for bad in ({"skill_base": -1.0}, {"skill_max": math.nan}, {"skill_speed": 1.0}):
        with pytest.raises(apps.AppError):
            apps.set_matchmaking(store.apps, app_id, bad)
    assert apps.load(store.apps, app_id).matchmaking == {}
    app = apps.set_matchmaking(store.apps, app_id, {"skill_base": 2.0, "skill_max": 9.0})
    assert SkillWindow.of(Config(), app) == SkillWindow(2.0, 0.2, 9.0)
    app = apps.set_matchmaking(store.apps, app_id, {"skill_base": None})
    assert SkillWindow.of(Config(), app) == SkillWindow(3.0, 0.2, 9.0)


def rate(store: GameStore, app_id: str, player_id: str, mu: float, seats: int) -> None:
    """Give ``player_id`` the rating ``mu`` at classic tables of ``seats`` (through the
    ratings' store API, as a rated game would)."""
    applied = store.ratings.apply(
        rating_tag(app_id, player_id),
        f"setup-{uuid.uuid4().hex}",
        pool_name("classic", seats),
        mu_change=mu - DEFAULT_MU,
        sigma_before=DEFAULT_SIGMA,
        sigma_after=DEFAULT_SIGMA,
        default=(DEFAULT_MU, DEFAULT_SIGMA),
    )
    assert applied.applied and applied.mu == pytest.approx(mu)


def test_over_http_players_far_apart_in_rating_meet_once_the_table_waited(
    apps_client, new_app, store
):
    """The app's own window (``apps matchmaking``): 1 around the table's mean, 20 more
    a second of its wait.  Ann (10) and bob (30) are not seated together at first;
    cy (30) joins bob; once ann's table waited a second, dan (30) is seated with her;
    and a player's leave takes its rating out of its table's skill."""
    app = new_app("cards")
    apps.set_matchmaking(
        store.apps, app.id, {"skill_base": 1.0, "skill_widen_per_second": 20.0, "skill_max": 100}
    )
    for player, mu in (("ann", 10.0), ("bob", 30.0), ("cy", 30.0), ("dan", 30.0)):
        rate(store, app.id, player, mu, 3)

    def quick_join(player: str) -> dict[str, Any]:
        token = mint(apps_client, app, player, player)
        answer = apps_client.post(
            "/v1/lobby/quick-join", json={"name": player, "seats": 3}, headers=bearer(token)
        )
        assert answer.status_code == 201, answer.get_json()
        return answer.get_json()

    ann, bob = quick_join("ann"), quick_join("bob")
    assert ann["created"] and bob["created"] and ann["id"] != bob["id"]
    assert quick_join("cy")["id"] == bob["id"]
    time.sleep(1.5)
    dan = quick_join("dan")
    assert (dan["id"], dan["created"]) == (ann["id"], False)
    table = table_of("classic", {}, 3, 60, 2, app.id)
    assert store.lobby.skills(table, ann["id"]) == {"ann": 10.0, "dan": 30.0}
    removed = apps_client.delete(f"/v1/games/{ann['id']}/players/ann", headers=app.auth)
    assert removed.status_code == 200, removed.get_json()
    assert store.lobby.skills(table, ann["id"]) == {"dan": 30.0}


def test_over_http_a_crowd_of_mixed_ratings_fills_games_of_its_levels(apps_app, new_app, store):
    """36 players rated at three levels quick-join 3-seat tables at once over HTTP
    (each with its key, retrying a 503 with it): every seat given once, no game
    over-filled, no two levels together (the app's window: 2, never widening)."""
    app = new_app("cards")
    apps.set_matchmaking(
        store.apps, app.id, {"skill_base": 2.0, "skill_widen_per_second": 0.0, "skill_max": 2.0}
    )
    rng = random.Random(11)
    levels = {f"u{i}": rng.choice([15.0, 25.0, 35.0]) for i in range(36)}
    setup = apps_app.test_client()
    tokens = {}
    for player, mu in levels.items():
        rate(store, app.id, player, mu, 3)
        tokens[player] = mint(setup, app, player, player)
    barrier = threading.Barrier(len(levels))
    answers: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()

    def client(player: str) -> None:
        http = apps_app.test_client()
        headers = {**bearer(tokens[player]), "Idempotency-Key": str(uuid.uuid4())}
        barrier.wait()
        for _try in range(20):
            answer = http.post(
                "/v1/lobby/quick-join", json={"name": player, "seats": 3}, headers=headers
            )
            if answer.status_code == 201:
                with lock:
                    answers[player] = answer.get_json()
                return
            assert answer.status_code == 503, answer.get_json()
            time.sleep(0.1)

    threads = [threading.Thread(target=client, args=(p,)) for p in levels]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert_seated_by_level(store, answers, levels, 3)


def test_a_waiting_table_is_filled_with_bots_of_its_players_level(
    apps_app, new_app, store, bots_for
):
    """The app's ``bot_fill_seconds`` (1 s): ann (40) and bob (25) each wait alone at
    a 3-seat table; a bot worker then seats expert bots beside ann, basic ones beside
    bob, and both games start.  A table filled by players in time gets no bot."""
    app = new_app("cards")
    apps.set_matchmaking(store.apps, app.id, {"bot_fill_seconds": 1.0, "skill_base": 1.0})
    bots_for(apps_app)
    http = apps_app.test_client()
    for player, mu in (("ann", 40.0), ("bob", 25.0), ("cy", 32.0), ("dan", 32.0)):
        rate(store, app.id, player, mu, 3 if player in ("ann", "bob") else 2)

    def quick_join(player: str, seats: int) -> dict[str, Any]:
        token = mint(http, app, player, player)
        answer = http.post(
            "/v1/lobby/quick-join", json={"name": player, "seats": seats}, headers=bearer(token)
        )
        assert answer.status_code == 201, answer.get_json()
        return answer.get_json()

    ann, bob = quick_join("ann", 3), quick_join("bob", 3)
    cy, dan = quick_join("cy", 2), quick_join("dan", 2)
    assert ann["id"] != bob["id"] and dan["id"] == cy["id"] and dan["status"] == "playing"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        publics = [
            http.get(f"/v1/games/{g['id']}", headers=app.auth).get_json() for g in (ann, bob)
        ]
        if all(p["status"] != "waiting" for p in publics):
            break
        time.sleep(0.2)
    for public, level in zip(publics, ("expert", "basic"), strict=True):
        assert public["status"] in ("playing", "finished"), public["status"]
        assert [p["bot"] for p in public["players"]] == [None, level, level]
    started = http.get(f"/v1/games/{cy['id']}", headers=app.auth).get_json()
    assert [p["bot"] for p in started["players"]] == [None, None]
    late = quick_join("ann", 3)
    assert late["created"] and late["id"] not in (ann["id"], bob["id"])
