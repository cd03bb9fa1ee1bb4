"""Bad input of every kind: the right 4xx as problem+json, never a 5xx, and the game
(its state hash and event stream in Redis) exactly as before."""

from __future__ import annotations

from typing import Any

import pytest

from service.engine.cards import parse_cards
from tests.api.conftest import make_app
from tests.hardening.conftest import snapshot

GOOD = {"type": "draw", "source": "stock"}
MOVE_JSON = {"Content-Type": "application/json"}
BAD_TOKEN = "x" * 43


def _problem(response: Any, status: int | tuple[int, ...], code: str | None = None) -> None:
    statuses = (status,) if isinstance(status, int) else status
    assert response.status_code in statuses, (response.status_code, response.get_data()[:300])
    assert response.mimetype == "application/problem+json", response.mimetype
    body = response.get_json()
    assert body["status"] == response.status_code
    assert body["code"] and body["title"] and "detail" in body
    if code is not None:
        assert body["code"] == code, body


def _game_in_discard_phase(make_game: Any) -> Any:
    game = make_game(2)
    seat = game.public()["round"]["turn"]
    assert game.move(seat, GOOD).status_code == 200
    return game, seat


def _not_held(hand: list[str]) -> str:
    held = set(hand)
    return next(c.code for c in parse_cards("2C 3D 4H 5S 6C 7D 8H 9S") if c.code not in held)


def move_cases(seat: int, other: int, hand: list[str]) -> list[tuple[str, Any, dict, int, str]]:
    """(label, body (bytes or JSON), headers, status, code) for POST /moves."""
    missing = _not_held(hand)
    deep = b"[" * 5000 + b"]" * 5000
    return [
        ("malformed json", b"{", {}, 400, "INVALID_JSON"),
        ("truncated json", b'{"type": "draw", "source": "st', {}, 400, "INVALID_JSON"),
        ("invalid utf-8", b"\xff\xfe\xfd", {}, 400, "INVALID_JSON"),
        ("deeply nested json", deep, {}, 400, "INVALID_JSON"),
        ("empty body", b"", {}, 400, "INVALID_JSON"),
        ("array body", [GOOD], {}, 422, "VALIDATION_ERROR"),
        ("string body", "draw", {}, 422, "VALIDATION_ERROR"),
        ("null body", None, {}, 422, "VALIDATION_ERROR"),
        ("type is a number", {"type": 5}, {}, 422, "VALIDATION_ERROR"),
        ("unknown move type", {"type": "fly"}, {}, 422, "VALIDATION_ERROR"),
        ("missing source", {"type": "draw"}, {}, 422, "VALIDATION_ERROR"),
        ("bad source", {"type": "draw", "source": "sky"}, {}, 422, "VALIDATION_ERROR"),
        ("unknown field", {**GOOD, "extra": 1}, {}, 422, "VALIDATION_ERROR"),
        ("card not a code", {"type": "discard", "card": "ZZ"}, {}, 422, "MALFORMED"),
        ("card is a list", {"type": "discard", "card": ["7H"]}, {}, 422, "VALIDATION_ERROR"),
        ("card too long", {"type": "discard", "card": "7H" * 50}, {}, 422, "VALIDATION_ERROR"),
        ("card not held", {"type": "discard", "card": missing}, {}, 422, "CARD_NOT_IN_HAND"),
        (
            "too many melds",
            {"type": "go_out", "discard": hand[0], "melds": [[hand[1]]] * 17},
            {},
            422,
            "VALIDATION_ERROR",
        ),
        (
            "melds of cards not held",
            {"type": "go_out", "discard": hand[0], "melds": [[missing, missing, missing]]},
            {},
            422,
            "CARD_NOT_IN_HAND",
        ),
        (
            "melds not a list",
            {"type": "go_out", "discard": hand[0], "melds": "all"},
            {},
            422,
            "VALIDATION_ERROR",
        ),
        ("draw twice", GOOD, {}, 409, "WRONG_PHASE"),
        ("huge body", b'{"type": "draw", "x": "' + b"a" * 70000 + b'"}', {}, 413, None),
        ("if-match garbage", GOOD, {"If-Match": "garbage"}, 412, "PRECONDITION_FAILED"),
        ("if-match two tags", GOOD, {"If-Match": '"1", "2"'}, 412, "PRECONDITION_FAILED"),
        ("if-match stale", GOOD, {"If-Match": '"1"'}, 412, "PRECONDITION_FAILED"),
        ("if-match huge", GOOD, {"If-Match": '"' + "9" * 400 + '"'}, 412, None),
        ("idempotency key too long", GOOD, {"Idempotency-Key": "k" * 256}, 400, "BAD_REQUEST"),
        ("idempotency key empty", GOOD, {"Idempotency-Key": ""}, 400, "BAD_REQUEST"),
        ("no token", GOOD, {"Authorization": None}, 401, "UNAUTHORIZED"),
        ("wrong token", GOOD, {"Authorization": f"Bearer {BAD_TOKEN}"}, 401, "UNAUTHORIZED"),
        ("basic auth", GOOD, {"Authorization": "Basic dXNlcjpwYXNz"}, 401, "UNAUTHORIZED"),
        ("bearer without token", GOOD, {"Authorization": "Bearer "}, 401, "UNAUTHORIZED"),
        ("huge token", GOOD, {"Authorization": "Bearer " + "t" * 6000}, 401, "UNAUTHORIZED"),
        ("out of turn", {"type": "discard", "card": "7H"}, {"seat": other}, 409, "NOT_YOUR_TURN"),
    ]


def test_bad_moves_answer_4xx_and_change_nothing(make_game, client, redis_client):
    game, seat = _game_in_discard_phase(make_game)
    other = 1 - seat
    hand = game.view(seat)["hand"]
    before = snapshot(redis_client, game.id)
    version = game.public()["version"]
    cases = move_cases(seat, other, hand)
    for label, body, extra, status, code in cases:
        headers = {**game.auth(extra.pop("seat", seat)), **MOVE_JSON, **extra}
        headers = {k: v for k, v in headers.items() if v is not None}
        data = body if isinstance(body, bytes) else __import__("orjson").dumps(body)
        response = client.post(f"/v1/games/{game.id}/moves", data=data, headers=headers)
        try:
            _problem(response, status, code)
        except AssertionError as exc:
            raise AssertionError(f"{label}: {exc}") from None
        assert snapshot(redis_client, game.id) == before, label
    assert game.public()["version"] == version
    assert len(cases) >= 30


def test_token_of_another_game_is_401(make_game, redis_client):
    game, seat = _game_in_discard_phase(make_game)
    other = make_game(2, seed="other")
    before = snapshot(redis_client, game.id)
    response = game.client.post(
        f"/v1/games/{game.id}/moves",
        json={"type": "discard", "card": game.view(seat)["hand"][0]},
        headers=other.auth(0),
    )
    _problem(response, 401, "UNAUTHORIZED")
    assert snapshot(redis_client, game.id) == before


CREATE_CASES: list[tuple[str, Any, int]] = [
    ("no players", {}, 422),
    ("empty players", {"players": []}, 422),
    ("players not a list", {"players": "alice"}, 422),
    ("player without name", {"players": [{}]}, 422),
    ("name too long", {"players": [{"name": "n" * 41}]}, 422),
    ("name empty", {"players": [{"name": ""}]}, 422),
    ("name with NUL", {"players": [{"name": "a\x00b"}]}, 422),
    ("name with newline", {"players": [{"name": "a\nb"}]}, 422),
    ("name with markup", {"players": [{"name": "<script>"}]}, 422),
    ("name a number", {"players": [{"name": 7}]}, 422),
    ("too many players", {"players": [{"name": f"p{i}"} for i in range(9)]}, 422),
    ("a thousand players", {"players": [{"name": "p"}] * 1000}, 422),
    ("seats 1", {"players": [{"name": "a"}], "seats": 1}, 422),
    ("seats 99", {"players": [{"name": "a"}], "seats": 99}, 422),
    ("seats negative", {"players": [{"name": "a"}], "seats": -2}, 422),
    ("seats text", {"players": [{"name": "a"}], "seats": "two"}, 422),
    ("seats below players", {"players": [{"name": "a"}, {"name": "b"}], "seats": 1}, 422),
    ("unknown option", {"players": [{"name": "a"}, {"name": "b"}], "options": {"x": 1}}, 422),
    (
        "bad option value",
        {"players": [{"name": "a"}, {"name": "b"}], "options": {"aces": "sideways"}},
        422,
    ),
    (
        "option wrong type",
        {"players": [{"name": "a"}, {"name": "b"}], "options": {"max_turns_per_round": "x"}},
        422,
    ),
    (
        "option out of range",
        {"players": [{"name": "a"}, {"name": "b"}], "options": {"max_turns_per_round": -5}},
        422,
    ),
    ("options a list", {"players": [{"name": "a"}, {"name": "b"}], "options": [1]}, 422),
    ("unknown ruleset", {"players": [{"name": "a"}, {"name": "b"}], "ruleset": "nope"}, 422),
    ("ruleset too long", {"players": [{"name": "a"}, {"name": "b"}], "ruleset": "r" * 500}, 422),
    ("unknown bot", {"players": [{"name": "a"}, {"name": "b", "bot": "godlike"}]}, 422),
    (
        "only bots",
        {"players": [{"name": "a", "bot": "random"}, {"name": "b", "bot": "random"}]},
        422,
    ),
    ("seed too long", {"players": [{"name": "a"}, {"name": "b"}], "seed": "s" * 200}, 422),
    ("unknown field", {"players": [{"name": "a"}, {"name": "b"}], "admin": True}, 422),
    ("body an array", [{"name": "a"}], (400, 422)),
]


@pytest.mark.parametrize(
    ("label", "body", "status"), CREATE_CASES, ids=[c[0] for c in CREATE_CASES]
)
def test_bad_creations_are_4xx_and_create_nothing(client, redis_client, label, body, status):
    response = client.post("/v1/games", json=body)
    _problem(response, status)
    assert not list(redis_client.scan_iter(match="t13:*")), label


@pytest.mark.parametrize(
    ("label", "data", "headers", "status"),
    [
        ("malformed json", b'{"players": [', {"Content-Type": "application/json"}, 400),
        ("deeply nested", b"[" * 5000 + b"]" * 5000, {"Content-Type": "application/json"}, 400),
        ("invalid utf-8", b"\xff\xfe", {"Content-Type": "application/json"}, 400),
        (
            "huge",
            b'{"players": "' + b"a" * 70000 + b'"}',
            {"Content-Type": "application/json"},
            413,
        ),
        ("text/plain", b'{"players": [{"name": "a"}]}', {"Content-Type": "text/plain"}, (415, 422)),
        (
            "idempotency key too long",
            b"{}",
            {"Content-Type": "application/json", "Idempotency-Key": "k" * 300},
            (400, 422),
        ),
    ],
)
def test_bad_creation_bodies(client, redis_client, label, data, headers, status):
    response = client.post("/v1/games", data=data, headers=headers)
    _problem(response, status)
    assert not list(redis_client.scan_iter(match="t13:*")), label


def test_bad_joins_and_full_games(make_game, client, redis_client):
    game = make_game(1, seats=2)
    before = snapshot(redis_client, game.id)
    for body, status in [
        ({}, 422),
        ({"name": ""}, 422),
        ({"name": "n" * 1000}, 422),
        ({"name": "ok", "extra": 1}, 422),
        ({"name": ["a"]}, 422),
        ({"name": "a\u0007"}, 422),
    ]:
        _problem(client.post(f"/v1/games/{game.id}/players", json=body), status)
        assert snapshot(redis_client, game.id) == before, body
    assert client.post(f"/v1/games/{game.id}/players", json={"name": "b"}).status_code == 201
    full = snapshot(redis_client, game.id)
    _problem(client.post(f"/v1/games/{game.id}/players", json={"name": "c"}), 409, "GAME_FULL")
    assert snapshot(redis_client, game.id) == full


WEIRD_IDS = [
    "x" * 65,
    "a%7Bb%7D",
    "a:b",
    "%00",
    "..%2F..%2Fetc",
    "%E2%98%83",
    "a b",
    "nope",
    "x" * 64,
]


@pytest.mark.parametrize("game_id", WEIRD_IDS)
@pytest.mark.parametrize("suffix", ["", "/view", "/events", "/moves", "/players"])
def test_weird_and_unknown_ids_are_404(client, game_id, suffix):
    method = client.post if suffix in ("/moves", "/players") else client.get
    kwargs: dict[str, Any] = {"headers": {"Authorization": f"Bearer {BAD_TOKEN}"}}
    if suffix == "/moves":
        kwargs["json"] = GOOD
    if suffix == "/players":
        kwargs = {"json": {"name": "a"}}
    response = method(f"/v1/games/{game_id}{suffix}", **kwargs)
    # 401 is right too: /moves checks the token before the game.
    _problem(response, (404, 401) if suffix == "/moves" else 404)


@pytest.mark.parametrize(
    "query",
    [
        "after=-1",
        "after=abc",
        "after=99999999999999999999",
        "after=1e400",
        "wait=31",
        "wait=3600",
        "wait=-1",
        "wait=nan",
        "wait=inf",
        "wait=abc",
    ],
)
def test_bad_event_queries_are_422(make_game, client, query):
    game = make_game(2)
    response = client.get(f"/v1/games/{game.id}/events?{query}")
    _problem(response, 422)


def test_wrong_methods_and_unknown_routes(make_game, client, redis_client):
    game = make_game(2)
    before = snapshot(redis_client, game.id)
    for method, path, status in [
        ("delete", f"/v1/games/{game.id}", 405),
        ("put", f"/v1/games/{game.id}/moves", 405),
        ("patch", "/v1/games", 405),
        ("get", "/v1/nothing-here", 404),
        ("get", "/v2/games", 404),
    ]:
        response = getattr(client, method)(path, headers=game.auth(0))
        _problem(response, status)
    assert snapshot(redis_client, game.id) == before


def test_garbage_conditional_headers_on_reads(make_game, client):
    game = make_game(2)
    for value in ("garbage", '"', "W/", "*" * 500, '"1", garbage'):
        response = client.get(f"/v1/games/{game.id}", headers={"If-None-Match": value})
        assert response.status_code in (200, 304), (value, response.status_code)


def test_body_limit_is_configurable(redis_client, redis_url):
    app = make_app(redis_url, MAX_BODY_BYTES="2048")
    client = app.test_client()
    players = [{"name": "n" * 40}] * 8
    response = client.post(
        "/v1/games", json={"players": players, "seed": "s" * 128, "x": "y" * 3000}
    )
    _problem(response, 413, "PAYLOAD_TOO_LARGE")
