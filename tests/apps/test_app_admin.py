"""An app's administration of its games (``AUTH_MODE=apps``, its secret key), on the
test Redis: its listing with filters and pages, its view naming each seat's player,
aborting a game (a follower sees it end, moves are refused), removing a player from
a waiting game; another app sees none of it; the metrics' ``app`` label."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
from flask.testing import FlaskClient
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from service.hosting.tokens import is_app_id
from service.store import keys
from service.store.due_games import DueGames
from tests.api.conftest import make_app
from tests.api.test_spec_conformance import CheckedClient, Spec, check_events
from tests.apps.conftest import AppKey, bearer, mint, two_player_game


def listing(client: FlaskClient, app: AppKey, **query: Any) -> dict[str, Any]:
    answer = client.get("/v1/app/games", query_string=query, headers=app.auth)
    assert answer.status_code == 200, answer.get_json()
    found: dict[str, Any] = answer.get_json()
    return found


def every_page(client: FlaskClient, app: AppKey, **query: Any) -> list[dict[str, Any]]:
    games, cursor = [], None
    for _ in range(100):
        page = listing(client, app, **query, **({} if cursor is None else {"cursor": cursor}))
        games += page["games"]
        cursor = page["next"]
        if cursor is None:
            return games
    raise AssertionError("the pages did not end")


def waiting_game(client: FlaskClient, app: AppKey, player_id: str) -> str:
    body = {"players": [{"name": player_id, "player_id": player_id}], "seats": 3}
    answer = client.post("/v1/games", json=body, headers=app.auth)
    assert answer.status_code == 201, answer.get_json()
    game_id: str = answer.get_json()["id"]
    return game_id


def test_an_app_lists_its_games_newest_first_with_filters_and_pages(apps_client, new_app):
    app, other = new_app("cards"), new_app("other")
    playing = [two_player_game(apps_client, app)["id"] for _ in range(3)]
    waiting = [waiting_game(apps_client, app, f"w{i}") for i in range(4)]
    theirs = two_player_game(apps_client, other)["id"]
    made = playing + waiting  # in this order: the listing gives the newest first

    games = every_page(apps_client, app, limit=3)
    assert [g["id"] for g in games] == made[::-1]
    assert theirs not in {g["id"] for g in games}
    first = games[-1]
    assert first["status"] == "playing" and first["ruleset"] == "classic"
    assert [(p["seat"], p["name"], p["player_id"]) for p in first["players"]] == [
        (0, "ann", "u1"),
        (1, "bob", "u2"),
    ]
    assert [g["id"] for g in every_page(apps_client, app, status="waiting", limit=2)] == (
        waiting[::-1]
    )
    assert [g["id"] for g in every_page(apps_client, app, status="playing")] == playing[::-1]
    assert [g["id"] for g in every_page(apps_client, app, player_id="w2")] == [waiting[2]]
    assert every_page(apps_client, app, status="finished") == []
    assert [g["id"] for g in every_page(apps_client, other)] == [theirs]

    refused = apps_client.get("/v1/app/games?cursor=nonsense", headers=app.auth)
    assert refused.status_code == 422 and refused.get_json()["code"] == "VALIDATION_ERROR"
    player = mint(apps_client, app, "u1", "ann")
    denied = apps_client.get("/v1/app/games", headers=bearer(player))
    assert denied.status_code == 403 and denied.get_json()["code"] == "CREDENTIAL_NOT_ALLOWED"


def test_a_gone_game_leaves_the_listing(apps_client, new_app, store):
    app = new_app("cards")
    kept, gone = (two_player_game(apps_client, app)["id"] for _ in range(2))
    store.client.delete(keys.key(gone, keys.STATE))  # expired, say
    assert [g["id"] for g in listing(apps_client, app)["games"]] == [kept]
    members = store.apps.app_games(app.id, None, 10)
    assert [m.partition(":")[2] for m in members] == [kept]  # dropped as it was read


def test_only_the_app_reads_which_player_holds_which_seat(apps_client, new_app):
    app, other = new_app("cards"), new_app("other")
    game = two_player_game(apps_client, app)["id"]
    seen = apps_client.get(f"/v1/games/{game}", headers=app.auth)
    assert seen.status_code == 200
    assert [p["player_id"] for p in seen.get_json()["players"]] == ["u1", "u2"]
    again = apps_client.get(
        f"/v1/games/{game}", headers={**app.auth, "If-None-Match": seen.headers["ETag"]}
    )
    assert again.status_code == 304
    ann = mint(apps_client, app, "u1", "ann")
    for token in (ann,):
        public = apps_client.get(f"/v1/games/{game}", headers=bearer(token)).get_json()
        assert all("player_id" not in p for p in public["players"])
        view = apps_client.get(f"/v1/games/{game}/view", headers=bearer(token)).get_json()
        assert all("player_id" not in p for p in view["players"])
    assert apps_client.get(f"/v1/games/{game}", headers=other.auth).status_code == 404


def test_an_app_reads_its_games_events_as_a_spectator(apps_client, new_app):
    """The app's key reads a game's event log as a spectator does: the public events,
    never a seat's hand; another app's key is 404."""
    app, other = new_app("cards"), new_app("other")
    game = two_player_game(apps_client, app)["id"]
    assert apps_client.get(f"/v1/games/{game}/events").status_code == 401  # no credential
    seen = apps_client.get(f"/v1/games/{game}/events", headers=app.auth)
    assert seen.status_code == 200, seen.get_json()
    events = seen.get_json()["events"]
    assert {"game_created", "game_started", "round_started"} <= {e["type"] for e in events}
    assert not [e for e in events if "hand" in e]  # no seat's private events
    ann = mint(apps_client, app, "u1", "ann")
    mine = apps_client.get(f"/v1/games/{game}/events", headers=bearer(ann)).get_json()["events"]
    assert any(e["type"] == "dealt" and "hand" in e for e in mine)  # a seat sees its own hand
    assert apps_client.get(f"/v1/games/{game}/events", headers=other.auth).status_code == 404


def test_an_app_aborts_a_game_a_follower_sees_it_end_and_moves_are_refused(apps_client, new_app):
    app, other = new_app("cards"), new_app("other")
    game = two_player_game(apps_client, app)["id"]
    ann, bob = mint(apps_client, app, "u1", "ann"), mint(apps_client, app, "u2", "bob")
    view = apps_client.get(f"/v1/games/{game}/view", headers=bearer(ann)).get_json()
    last = apps_client.get(f"/v1/games/{game}/events", headers=bearer(ann)).get_json()["last_seq"]

    assert apps_client.post(f"/v1/games/{game}/abort", json={}, headers=other.auth).status_code == (
        404
    )
    by_player = apps_client.post(f"/v1/games/{game}/abort", json={}, headers=bearer(ann))
    assert by_player.status_code == 403
    aborted = apps_client.post(
        f"/v1/games/{game}/abort", json={"reason": "reported cheating"}, headers=app.auth
    )
    assert aborted.status_code == 200, aborted.get_json()
    assert aborted.get_json()["status"] == "aborted"
    assert [p["player_id"] for p in aborted.get_json()["players"]] == ["u1", "u2"]

    # A follower waiting for the next events (a long poll) gets the abort.
    waited = apps_client.get(
        f"/v1/games/{game}/events?after={last}&wait=5", headers=bearer(bob)
    ).get_json()
    assert [e["type"] for e in waited["events"]] == ["game_aborted"]
    assert waited["events"][0]["reason"] == "reported cheating"
    # A stream reader gets it too, from where it was.
    with apps_client.get(
        f"/v1/games/{game}/events?after={last}",
        headers={**bearer(ann), "Accept": "application/x-ndjson"},
        buffered=False,
    ) as stream:
        assert stream.status_code == 200
        lines = iter(stream.response)
        first = b""
        while not first.strip():
            first = next(lines)
        assert orjson.loads(first.strip().splitlines()[0])["type"] == "game_aborted"

    seat = view["round"]["turn"]
    token = ann if seat == 0 else bob
    move = apps_client.post(
        f"/v1/games/{game}/moves", json={"type": "draw", "source": "stock"}, headers=bearer(token)
    )
    assert move.status_code == 409 and move.get_json()["code"] == "GAME_ABORTED"
    public = apps_client.get(f"/v1/games/{game}", headers=bearer(ann)).get_json()
    assert public["status"] == "aborted" and public["timer"]["deadline"] is None
    twice = apps_client.post(f"/v1/games/{game}/abort", json={}, headers=app.auth)
    assert twice.status_code == 409 and twice.get_json()["code"] == "GAME_ABORTED"
    [mine] = apps_client.get("/v1/me/games", headers=bearer(ann)).get_json()["games"]
    assert mine["status"] == "aborted"
    assert [g["id"] for g in listing(apps_client, app, status="aborted")["games"]] == [game]


def test_an_aborted_game_with_a_bot_falls_due_no_more(apps_client, new_app, store):
    app = new_app("cards")
    body = {
        "players": [{"name": "ann", "player_id": "u1"}, {"name": "bot", "bot": "basic"}],
        "turn_timeout_seconds": 60,
    }
    game = apps_client.post("/v1/games", json=body, headers=app.auth).get_json()["id"]
    due = DueGames(store.client)
    assert due.due_at(game) is not None  # a bot's turn, or ann's timer
    assert apps_client.post(f"/v1/games/{game}/abort", json={}, headers=app.auth).status_code == (
        200
    )
    assert due.due_at(game) is None


def test_an_app_removes_a_player_from_a_waiting_game(apps_client, new_app):
    app, other = new_app("cards"), new_app("other")
    body = {
        "players": [{"name": "ann", "player_id": "u1"}, {"name": "bob", "player_id": "u2"}],
        "seats": 3,
    }
    game = apps_client.post("/v1/games", json=body, headers=app.auth).get_json()["id"]
    path = f"/v1/games/{game}/players/u2"
    assert apps_client.delete(path, headers=other.auth).status_code == 404
    removed = apps_client.delete(path, headers=app.auth)
    assert removed.status_code == 200, removed.get_json()
    assert removed.get_json() | {"version": 0} == {
        "id": game,
        "seat": 1,
        "player_id": "u2",
        "version": 0,
        "status": "waiting",
    }
    ann = mint(apps_client, app, "u1", "ann")
    answer = apps_client.get(f"/v1/games/{game}/events", headers=bearer(ann))
    assert answer.status_code == 200, answer.get_json()
    events = answer.get_json()["events"]
    assert events[-1] | {"seq": 0, "id": ""} == {
        "seq": 0,
        "id": "",
        "type": "player_left",
        "seat": 1,
        "name": "bob",
        "reason": "removed",
    }
    public = apps_client.get(f"/v1/games/{game}", headers=app.auth).get_json()
    assert public["open_seats"] == [1, 2] and public["players"][1]["player_id"] is None
    again = apps_client.delete(path, headers=app.auth)
    assert again.status_code == 404 and again.get_json()["code"] == "PLAYER_NOT_SEATED"
    bob = mint(apps_client, app, "u2", "bob")
    assert apps_client.get("/v1/me/games", headers=bearer(bob)).get_json()["games"] == []

    started = two_player_game(apps_client, app)["id"]
    refused = apps_client.delete(f"/v1/games/{started}/players/u1", headers=app.auth)
    assert refused.status_code == 409 and refused.get_json()["code"] == "GAME_STARTED"


def _requests(app: str, status: str = "200") -> float:
    labels = {
        "method": "GET",
        "route": "/v1/games/<game_id:game_id>",
        "status": status,
        "app": app,
    }
    return REGISTRY.get_sample_value("t13_http_requests_total", labels) or 0.0


def test_metrics_are_labelled_by_app_never_by_player(apps_client, new_app):
    app, other = new_app("cards"), new_app("other")
    game = two_player_game(apps_client, app)["id"]
    ann = mint(apps_client, app, "u1", "ann")
    before = (_requests(app.id), _requests(other.id), _requests("none", "404"))
    created = REGISTRY.get_sample_value("t13_games_created_total", {"app": app.id})
    assert created is not None and created >= 1
    apps_client.get(f"/v1/games/{game}", headers=app.auth)
    apps_client.get(f"/v1/games/{game}", headers=bearer(ann))
    apps_client.get(f"/v1/games/{game}", headers=other.auth)  # refused: no app's
    after = (_requests(app.id), _requests(other.id), _requests("none", "404"))
    assert (after[0] - before[0], after[1] - before[1], after[2] - before[2]) == (2, 0, 1)
    text = apps_client.get("/metrics").get_data(as_text=True)
    values = {
        sample.labels["app"]
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if "app" in sample.labels
    }
    assert {app.id, "none"} <= values
    assert all(value == "none" or is_app_id(value) for value in values)  # never a player's
    assert ann not in text


def test_the_apps_administration_keeps_to_the_spec(apps_client, new_app):
    app = new_app("cards")
    spec = Spec(apps_client.get("/openapi.json").get_json())
    checked = CheckedClient(apps_client, spec)
    body = {
        "players": [{"name": "ann", "player_id": "u1"}, {"name": "bob", "player_id": "u2"}],
        "seats": 3,
    }
    waiting = checked.request("POST", "/v1/games", json=body, headers=app.auth).get_json()["id"]
    playing = two_player_game(apps_client, app)["id"]
    for path in (f"/v1/games/{waiting}", f"/v1/games/{playing}", "/v1/app/games?limit=1"):
        assert checked.request("GET", path, headers=app.auth).status_code == 200
    removed = checked.request("DELETE", f"/v1/games/{waiting}/players/u2", headers=app.auth)
    assert removed.status_code == 200
    for game in (waiting, playing):
        aborted = checked.request("POST", f"/v1/games/{game}/abort", json={}, headers=app.auth)
        assert aborted.status_code == 200, aborted.get_json()
    refused = checked.request("POST", f"/v1/games/{playing}/abort", json={}, headers=app.auth)
    assert refused.status_code == 409
    ann = mint(apps_client, app, "u1", "ann")
    events = checked.request("GET", f"/v1/games/{playing}/events", headers=bearer(ann))
    seen = check_events(spec, events.get_json()["events"])
    events = checked.request("GET", f"/v1/games/{waiting}/events", headers=bearer(ann))
    assert {"game_aborted", "player_left"} <= seen | check_events(spec, events.get_json()["events"])


def test_an_abort_repeated_with_its_key_is_answered_as_the_first(apps_client, new_app):
    app = new_app("cards")
    game = two_player_game(apps_client, app)["id"]
    keyed = {**app.auth, "Idempotency-Key": str(uuid.uuid4())}
    first = apps_client.post(f"/v1/games/{game}/abort", json={"reason": "r"}, headers=keyed)
    again = apps_client.post(f"/v1/games/{game}/abort", json={"reason": "r"}, headers=keyed)
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()


def test_the_apps_administration_is_not_found_in_open_mode(redis_client, redis_url):
    client = make_app(redis_url).test_client()
    game = client.post("/v1/games", json={"players": [{"name": "ann"}], "seats": 2}).get_json()
    token = {"Authorization": f"Bearer {game['players'][0]['token']}"}
    for method, path in (
        ("GET", "/v1/app/games"),
        ("POST", f"/v1/games/{game['id']}/abort"),
        ("DELETE", f"/v1/games/{game['id']}/players/u1"),
    ):
        answer = client.open(path, method=method, json={} if method == "POST" else None)
        assert answer.status_code == 404, (path, answer.get_json())
        answer = client.open(path, method=method, headers=token)
        assert answer.status_code == 404, (path, answer.get_json())
    assert client.get(f"/v1/games/{game['id']}").get_json()["status"] == "waiting"
