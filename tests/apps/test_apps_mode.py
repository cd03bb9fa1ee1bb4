"""AUTH_MODE=apps over HTTP, on the test Redis: an app's backend, its players (two
devices each), seat tokens, another app, and every refused credential."""

from __future__ import annotations

import secrets
import time

import pytest
from flask.testing import FlaskClient

from tests.api.conftest import make_app
from tests.api.test_play import choose
from tests.apps.conftest import bearer, mint, two_player_game

QUICK = {"options": {"max_turns_per_round": 4}}  # a whole game in about 90 moves


def version_of(client: FlaskClient, game_id: str, auth: dict[str, str]) -> int:
    answer = client.get(f"/v1/games/{game_id}", headers=auth)
    assert answer.status_code == 200, answer.get_json()
    version: int = answer.get_json()["version"]
    return version


def play_to_the_end(client: FlaskClient, game_id: str, devices: dict[int, list[str]]) -> int:
    """Play ``game_id`` to its end, each seat's moves sent from its devices in turn;
    the number of moves."""
    sent = 0
    for _ in range(1000):
        any_token = devices[0][0]
        public = client.get(f"/v1/games/{game_id}", headers=bearer(any_token)).get_json()
        if public["status"] == "finished":
            return sent
        seat = public["round"]["turn"]
        token = devices[seat][sent % len(devices[seat])]
        view = client.get(f"/v1/games/{game_id}/view", headers=bearer(token))
        assert view.status_code == 200, view.get_json()
        answer = client.post(
            f"/v1/games/{game_id}/moves", json=choose(view.get_json()), headers=bearer(token)
        )
        assert answer.status_code == 200, answer.get_json()
        sent += 1
    raise AssertionError("the game did not finish")


def test_an_apps_backend_creates_a_game_its_players_play_from_two_devices(apps_client, new_app):
    app = new_app("cards")
    created = two_player_game(apps_client, app, **QUICK)
    assert created["id"].startswith(app.id + "-")
    seats = created["players"]
    assert [(s["seat"], s["player_id"]) for s in seats] == [(0, "u1"), (1, "u2")]
    assert all("token" not in s for s in seats)  # a player's seat has no token of its own
    phone, tablet = mint(apps_client, app, "u1", "ann"), mint(apps_client, app, "u1", "ann")
    bob = mint(apps_client, app, "u2", "bob")
    for token, seat in ((phone, 0), (tablet, 0), (bob, 1)):
        view = apps_client.get(f"/v1/games/{created['id']}/view", headers=bearer(token))
        assert view.status_code == 200, view.get_json()
        assert view.get_json()["seat"] == seat
    moves = play_to_the_end(apps_client, created["id"], {0: [phone, tablet], 1: [bob]})
    assert moves > 20
    for token in (phone, tablet):
        mine = apps_client.get("/v1/me/games", headers=bearer(token))
        assert mine.status_code == 200, mine.get_json()
        assert mine.get_json()["games"] == [
            {
                "id": created["id"],
                "seat": 0,
                "status": "finished",
                "version": version_of(apps_client, created["id"], app.auth),
                "players": ["ann", "bob"],
            }
        ]


def test_a_player_joins_and_quick_joins_as_itself_once_a_game(apps_client, new_app):
    app = new_app("cards")
    made = apps_client.post(
        "/v1/games",
        json={"players": [{"name": "ann", "player_id": "u1"}], "seats": 3},
        headers=app.auth,
    )
    game_id = made.get_json()["id"]
    ann, cy = mint(apps_client, app, "u1", "ann"), mint(apps_client, app, "u3", "cy")
    again = apps_client.post(
        f"/v1/games/{game_id}/players", json={"name": "a"}, headers=bearer(ann)
    )
    assert again.status_code == 409
    assert again.get_json()["code"] == "ALREADY_SEATED"
    joined = apps_client.post(
        f"/v1/games/{game_id}/players", json={"name": "cy"}, headers=bearer(cy)
    )
    assert joined.status_code == 201, joined.get_json()
    assert joined.get_json()["player_id"] == "u3" and "token" not in joined.get_json()
    assert apps_client.get("/v1/me/games", headers=bearer(cy)).get_json()["games"][0]["seat"] == 1
    quick = apps_client.post(
        "/v1/lobby/quick-join", json={"name": "cy", "seats": 2}, headers=bearer(cy)
    )
    assert quick.status_code == 201, quick.get_json()
    assert "token" not in quick.get_json() and quick.get_json()["id"].startswith(app.id)
    mine = apps_client.get("/v1/me/games", headers=bearer(cy)).get_json()["games"]
    assert [g["id"] for g in mine] == [quick.get_json()["id"], game_id]


def test_quick_join_never_seats_players_of_two_apps_together(apps_client, new_app):
    one, two = new_app("one"), new_app("two")
    first = apps_client.post(
        "/v1/lobby/quick-join",
        json={"name": "ann", "seats": 2},
        headers=bearer(mint(apps_client, one, "u1", "ann")),
    ).get_json()
    second = apps_client.post(
        "/v1/lobby/quick-join",
        json={"name": "bob", "seats": 2},
        headers=bearer(mint(apps_client, two, "u1", "bob")),
    ).get_json()
    assert first["created"] and second["created"]
    assert first["id"].startswith(one.id) and second["id"].startswith(two.id)
    listing = apps_client.get("/v1/games", headers=two.auth).get_json()["games"]
    assert [g["id"] for g in listing] == [second["id"]]


def test_another_app_and_its_players_neither_see_nor_touch_the_game(apps_client, new_app):
    app, other = new_app("cards"), new_app("other")
    game_id = two_player_game(apps_client, app)["id"]
    ann = mint(apps_client, app, "u1", "ann")
    before = version_of(apps_client, game_id, app.auth)
    stranger = mint(apps_client, other, "u1", "ann")  # the same user id, in the other app
    draw = {"type": "draw", "source": "stock"}
    for auth in (other.auth, bearer(stranger)):
        for method, path, body in (
            ("GET", "", None),
            ("GET", "/view", None),
            ("GET", "/events", None),
            ("POST", "/moves", draw),
            ("POST", "/players", {"name": "x"}),
            ("POST", "/stream-tickets", None),
            ("POST", "/resign", None),
        ):
            answer = apps_client.open(
                f"/v1/games/{game_id}{path}", method=method, json=body, headers=auth
            )
            assert answer.status_code == 404, (path, answer.get_json())
            assert answer.get_json()["code"] == "GAME_NOT_FOUND"
    assert apps_client.get("/v1/me/games", headers=bearer(stranger)).get_json()["games"] == []
    assert version_of(apps_client, game_id, bearer(ann)) == before


def test_seat_tokens_keep_working_for_seats_not_bound_to_a_player(apps_client, new_app):
    app = new_app("cards")
    made = apps_client.post(
        "/v1/games", json={"players": [{"name": "ann"}, {"name": "bob"}]}, headers=app.auth
    ).get_json()
    token = made["players"][0]["token"]
    assert apps_client.get(f"/v1/games/{made['id']}/view", headers=bearer(token)).status_code == 200
    assert apps_client.get(f"/v1/games/{made['id']}", headers=bearer(token)).status_code == 200
    other = apps_client.post(
        "/v1/games", json={"players": [{"name": "cy"}, {"name": "di"}]}, headers=app.auth
    ).get_json()
    elsewhere = apps_client.get(f"/v1/games/{other['id']}", headers=bearer(token))
    assert elsewhere.status_code == 401  # a seat's token reads its own game only
    create = apps_client.post("/v1/games", json={"players": [{"name": "x"}]}, headers=bearer(token))
    assert create.status_code == 403
    assert create.get_json()["code"] == "CREDENTIAL_NOT_ALLOWED"


def test_without_credentials_nothing_but_health_and_rules(apps_client, new_app):
    app = new_app("cards")
    game_id = two_player_game(apps_client, app)["id"]
    for method, path in (
        ("GET", f"/v1/games/{game_id}"),
        ("GET", f"/v1/games/{game_id}/events"),
        ("GET", "/v1/games"),
        ("POST", "/v1/games"),
        ("POST", "/v1/lobby/quick-join"),
        ("POST", "/v1/hands/evaluate"),
        ("GET", "/v1/me/games"),
    ):
        answer = apps_client.open(path, method=method, json={})
        assert answer.status_code == 401, (path, answer.get_json())
        assert answer.get_json()["code"] == "UNAUTHORIZED"
    for path in ("/v1/rulesets", "/healthz"):
        assert apps_client.get(path).status_code == 200


def test_only_an_apps_key_mints_and_revokes(apps_client, new_app):
    app = new_app("cards")
    ann = mint(apps_client, app, "u1", "ann")
    for auth in (bearer(ann), {}):
        answer = apps_client.post("/v1/players/u2/tokens", json={"name": "b"}, headers=auth)
        assert answer.status_code in (401, 403)
        assert answer.get_json()["code"] in ("CREDENTIAL_NOT_ALLOWED", "UNAUTHORIZED")
    assert apps_client.get("/v1/me/games", headers=app.auth).status_code == 403


BAD = {
    "unknown app key": ("t13_sk_aaaaaaaaaa_" + "x" * 43, 401, "INVALID_CREDENTIAL"),
    "unknown player token": ("t13_pt_" + "0" * 32 + "_" + "y" * 43, 401, "INVALID_CREDENTIAL"),
    "malformed app key": ("t13_sk_nope", 401, "INVALID_CREDENTIAL"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_credentials_get_a_stable_code_and_change_nothing(apps_client, new_app, case):
    token, status, code = BAD[case]
    app = new_app("cards")
    game_id = two_player_game(apps_client, app)["id"]
    before = version_of(apps_client, game_id, app.auth)
    for method, path, body in (
        ("POST", f"/v1/games/{game_id}/moves", {"type": "draw", "source": "stock"}),
        ("POST", f"/v1/games/{game_id}/players", {"name": "x"}),
        ("POST", "/v1/games", {"players": [{"name": "x"}]}),
        ("GET", f"/v1/games/{game_id}", None),
    ):
        answer = apps_client.open(path, method=method, json=body, headers=bearer(token))
        assert answer.status_code == status, (path, answer.get_json())
        assert answer.get_json()["code"] == code
        assert token not in answer.get_data(as_text=True)
    assert version_of(apps_client, game_id, app.auth) == before


def test_a_wrong_key_of_a_real_app_is_refused(apps_client, new_app):
    app = new_app("cards")
    forged = app.key[:-4] + ("AAAA" if not app.key.endswith("AAAA") else "BBBB")
    answer = apps_client.post(
        "/v1/games", json={"players": [{"name": "x"}]}, headers=bearer(forged)
    )
    assert answer.status_code == 401
    assert answer.get_json()["code"] == "INVALID_CREDENTIAL"


def test_an_expired_player_token_is_refused(apps_client, new_app):
    app = new_app("cards")
    token = mint(apps_client, app, "u1", "ann", lifetime_seconds=1)
    deadline = time.monotonic() + 10
    while apps_client.get("/v1/me/games", headers=bearer(token)).status_code == 200:
        assert time.monotonic() < deadline, "the token outlived its lifetime"
        time.sleep(0.1)
    answer = apps_client.get("/v1/me/games", headers=bearer(token))
    assert answer.status_code == 401
    assert answer.get_json()["code"] == "CREDENTIAL_EXPIRED"


def test_revoked_and_barred_players_are_refused(apps_client, new_app):
    app = new_app("cards")
    game_id = two_player_game(apps_client, app)["id"]
    ann = mint(apps_client, app, "u1", "ann")
    revoked = apps_client.delete("/v1/players/u1/tokens", headers=app.auth)
    assert revoked.get_json() == {"player_id": "u1", "revoked": 1}
    refused = apps_client.get(f"/v1/games/{game_id}/view", headers=bearer(ann))
    assert refused.status_code == 401
    assert refused.get_json()["code"] == "INVALID_CREDENTIAL"
    again = mint(apps_client, app, "u1", "ann")  # the seat is still the player's
    assert apps_client.get(f"/v1/games/{game_id}/view", headers=bearer(again)).status_code == 200
    barred = apps_client.put("/v1/players/u1/bar", headers=app.auth)
    assert barred.get_json() == {"player_id": "u1", "barred": True, "revoked": 1}
    assert apps_client.get(f"/v1/games/{game_id}/view", headers=bearer(again)).status_code == 401
    minted = apps_client.post("/v1/players/u1/tokens", json={"name": "ann"}, headers=app.auth)
    assert minted.status_code == 403
    assert minted.get_json()["code"] == "PLAYER_BARRED"
    seated = apps_client.post(
        "/v1/games", json={"players": [{"name": "ann", "player_id": "u1"}]}, headers=app.auth
    )
    assert seated.status_code == 403
    assert seated.get_json()["code"] == "PLAYER_BARRED"
    apps_client.delete("/v1/players/u1/bar", headers=app.auth)
    assert mint(apps_client, app, "u1", "ann").startswith("t13_pt_")


def test_refused_credentials_count_against_the_address(redis_client, redis_url, new_app):
    client = make_app(
        redis_url, AUTH_MODE="apps", RATE_LIMITS="true", RATE_LIMIT_AUTH_FAILURES="3/minute"
    ).test_client()
    app = new_app("cards")
    other = new_app("other")
    game_id = two_player_game(client, app)["id"]
    codes = []
    for _ in range(4):
        answer = client.get(f"/v1/games/{game_id}", headers=other.auth)  # a foreign game
        codes.append(answer.get_json()["code"])
    assert codes == ["GAME_NOT_FOUND"] * 3 + ["RATE_LIMITED"]


def test_a_revoked_app_and_its_games_are_refused(apps_client, new_app, store):
    from service.hosting import apps

    app = new_app("cards")
    game_id = two_player_game(apps_client, app)["id"]
    ann = mint(apps_client, app, "u1", "ann")
    apps.revoke(store.apps, app.id)
    deadline = time.monotonic() + 5
    while apps_client.get(f"/v1/games/{game_id}", headers=app.auth).status_code == 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    for auth in (app.auth, bearer(ann)):
        answer = apps_client.get(f"/v1/games/{game_id}", headers=auth)
        assert answer.status_code == 404
        answer = apps_client.get("/v1/games", headers=auth)
        assert answer.status_code == 401
        assert answer.get_json()["code"] == "INVALID_CREDENTIAL"


def test_open_mode_is_unchanged(client):
    made = client.post("/v1/games", json={"players": [{"name": "ann"}, {"name": "bob"}]})
    assert made.status_code == 201
    assert len(made.get_json()["id"]) == 22
    assert client.post("/v1/players/u1/tokens", json={"name": "a"}).status_code == 404
    answer = client.post("/v1/games", json={"players": [{"name": "ann", "player_id": "u1"}]})
    assert answer.status_code == 403


def test_a_keyed_create_is_made_once_per_app(apps_client, new_app):
    one, two = new_app("one"), new_app("two")
    body = {"players": [{"name": "ann", "player_id": "u1"}, {"name": "bob"}]}
    key = {"Idempotency-Key": secrets.token_urlsafe(24)}
    first = apps_client.post("/v1/games", json=body, headers={**one.auth, **key})
    again = apps_client.post("/v1/games", json=body, headers={**one.auth, **key})
    other = apps_client.post("/v1/games", json=body, headers={**two.auth, **key})
    assert first.status_code == again.status_code == other.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    assert first.get_json()["id"].startswith(one.id) and other.get_json()["id"].startswith(two.id)


def test_a_players_token_takes_stream_tickets_follows_and_resigns(apps_client, new_app):
    app = new_app("cards")
    game_id = two_player_game(apps_client, app)["id"]
    ann = mint(apps_client, app, "u1", "ann")
    ticket = apps_client.post(f"/v1/games/{game_id}/stream-tickets", headers=bearer(ann))
    assert ticket.status_code == 201, ticket.get_json()
    events = apps_client.get(
        f"/v1/games/{game_id}/events?after=0&ticket={ticket.get_json()['ticket']}"
    )
    assert events.status_code == 200, events.get_json()
    dealt = [e for e in events.get_json()["events"] if e.get("seat") == 0]
    assert dealt  # the seat's private events: the ticket stands for the player's seat
    mine = apps_client.get(f"/v1/games/{game_id}/events?after=0", headers=bearer(ann))
    assert mine.get_json()["events"] == events.get_json()["events"]
    resigned = apps_client.post(f"/v1/games/{game_id}/resign", headers=bearer(ann))
    assert resigned.status_code == 200, resigned.get_json()
    assert resigned.get_json()["seat"] == 0
