"""Client input parsed strictly, on both paths (the fast lane and Flask): move bodies
whose fields are of the wrong JSON type, odd conditional headers, bodies not declared
as JSON, names that disguise themselves, numbers that are not integers, card codes
and query numbers with anything beyond their ASCII characters.  Each answer is a 4xx
problem+json and the game in Redis is exactly as before."""

from __future__ import annotations

import http.client
import unicodedata
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from flask.testing import FlaskClient
from werkzeug.test import EnvironBuilder, run_wsgi_app

from harness.gunicorn_server import GunicornServer
from tests.api.conftest import Game, create_game, make_app
from tests.hardening.conftest import snapshot

DRAW = {"type": "draw", "source": "stock"}
PROBLEM = "application/problem+json"


def _problem(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.get_data()[:300])
    assert response.mimetype == PROBLEM, response.mimetype
    body = response.get_json()
    assert body["status"] == status and body["title"] and "detail" in body
    if code is not None:
        assert body["code"] == code, body
    return dict(body)


@pytest.fixture(params=["true", "false"], ids=["fast-lane", "flask"])
def lane_client(request: Any, redis_client: Any, redis_url: str) -> FlaskClient:
    return make_app(redis_url, FAST_LANE=request.param).test_client()


def _game(client: FlaskClient, seed: str = "strict") -> tuple[Game, int]:
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed=seed)
    return game, game.public()["round"]["turn"]


def _post_move(game: Game, seat: int, data: bytes, **headers: str) -> Any:
    return game.client.post(
        f"/v1/games/{game.id}/moves",
        data=data,
        headers={**game.auth(seat), "Content-Type": "application/json", **headers},
    )


# -- defect 6: 500s from client input -----------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"type": ["draw"]},
        {"type": {}},
        {"type": {"draw": 1}, "source": "stock"},
        {"type": [], "card": "7H"},
        {"type": None},
        {"type": True},
        {"type": 1.5},
    ],
)
def test_a_move_type_of_any_json_type_is_422(lane_client, redis_client, body):
    game, seat = _game(lane_client)
    before = snapshot(redis_client, game.id)
    response = _post_move(game, seat, orjson.dumps(body))
    _problem(response, 422, "VALIDATION_ERROR")
    assert snapshot(redis_client, game.id) == before


@pytest.mark.parametrize(
    "if_match",
    ['""', '"3", ""', '"", "2"', '""""', 'W/""', '" "', '"2"x', '"0x2"', '"+2"', '"２"', '",'],
)
def test_odd_if_match_is_412_and_changes_nothing(lane_client, redis_client, if_match):
    game, seat = _game(lane_client)
    before = snapshot(redis_client, game.id)
    response = _post_move(game, seat, orjson.dumps(DRAW), **{"If-Match": if_match})
    body = _problem(response, 412, "PRECONDITION_FAILED")
    assert body["current_version"] == 1
    assert snapshot(redis_client, game.id) == before


def test_if_match_naming_the_version_still_applies(lane_client):
    game, seat = _game(lane_client)
    for if_match in ('"1"', ' "1" ', "*"):
        game, seat = _game(lane_client, seed=f"match-{if_match.strip()}")
        response = _post_move(game, seat, orjson.dumps(DRAW), **{"If-Match": if_match})
        assert response.status_code == 200, (if_match, response.get_json())


@pytest.mark.parametrize(
    ("if_none_match", "status"),
    [
        ('""', 200),
        ('"1", ""', 304),
        ('"", "2"', 200),
        ('W/"1"', 304),  # If-None-Match compares weakly (RFC 9110, 13.1.2)
        ('""""', 200),
        ('"１"', 200),
        ("*", 304),
        (" ", 200),
        (",,,", 200),
    ],
)
def test_odd_if_none_match_on_both_views(lane_client, if_none_match, status):
    game, seat = _game(lane_client)
    for path, headers in (
        (f"/v1/games/{game.id}", {}),
        (f"/v1/games/{game.id}/view", game.auth(seat)),
    ):
        response = lane_client.get(path, headers={**headers, "If-None-Match": if_none_match})
        assert response.status_code == status, (path, if_none_match, response.status_code)


# -- defect 7: chunked bodies are bounded -------------------------------------------


def _chunked(url: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        chunks = (body[i : i + 16384] for i in range(0, len(body), 16384))
        conn.request("POST", path, body=chunks, headers=headers, encode_chunked=True)
        response = conn.getresponse()
        return response.status, (response.getheader("Content-Type"), response.read())
    except (ConnectionResetError, BrokenPipeError):  # refused before all was sent
        return 413, None
    finally:
        conn.close()


@pytest.fixture(scope="module", params=["true", "false"], ids=["fast-lane", "flask"])
def server(request: Any, _redis_target: Any) -> Iterator[GunicornServer]:
    with GunicornServer({"REDIS_URL": _redis_target.url, "FAST_LANE": request.param}) as running:
        yield running


def _created(server: GunicornServer) -> tuple[str, dict[int, str], int]:
    status, (_ctype, raw) = _chunked(
        server.url,
        "/v1/games",
        orjson.dumps({"players": [{"name": "a"}, {"name": "b"}], "seed": "chunked"}),
        {"Content-Type": "application/json"},
    )
    assert status == 201, raw
    data = orjson.loads(raw)
    tokens = {p["seat"]: p["token"] for p in data["players"]}
    conn = http.client.HTTPConnection(server.url.removeprefix("http://"), timeout=10)
    conn.request("GET", f"/v1/games/{data['id']}")
    turn = orjson.loads(conn.getresponse().read())["round"]["turn"]
    conn.close()
    return data["id"], tokens, turn


def test_a_chunked_body_over_the_limit_is_413_and_applies_nothing(server, redis_client):
    game_id, tokens, turn = _created(server)
    before = snapshot(redis_client, game_id)
    padded = orjson.dumps(DRAW) + b" " * 256 * 1024  # valid JSON in its first 64 KB
    headers = {"Authorization": f"Bearer {tokens[turn]}", "Content-Type": "application/json"}
    status, answer = _chunked(server.url, f"/v1/games/{game_id}/moves", padded, headers)
    assert status == 413, answer
    if answer is not None:
        assert answer[0] == PROBLEM and orjson.loads(answer[1])["code"] == "PAYLOAD_TOO_LARGE"
    assert snapshot(redis_client, game_id) == before
    big_create = b'{"players": [{"name": "a"}, {"name": "b"}]}' + b" " * 256 * 1024
    status, _answer = _chunked(server.url, "/v1/games", big_create, headers)
    assert status == 413


def test_a_chunked_move_within_the_limit_is_played(server, redis_client):
    game_id, tokens, turn = _created(server)
    headers = {"Authorization": f"Bearer {tokens[turn]}", "Content-Type": "application/json"}
    body = orjson.dumps(DRAW) + b" " * 1000
    status, (_ctype, raw) = _chunked(server.url, f"/v1/games/{game_id}/moves", body, headers)
    assert status == 200, raw
    assert orjson.loads(raw)["version"] == 2


# -- defect 7: bodies must be declared JSON -----------------------------------------

NOT_JSON = [
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/jsonx",
    "application/json-seq",
    "text/json",
    "application/json; charset=latin-1",
    "json",
    "",
]


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_a_move_not_sent_as_json_is_415(lane_client, redis_client, content_type):
    game, seat = _game(lane_client)
    before = snapshot(redis_client, game.id)
    response = lane_client.post(
        f"/v1/games/{game.id}/moves",
        data=orjson.dumps(DRAW),
        headers={**game.auth(seat), "Content-Type": content_type},
    )
    _problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert snapshot(redis_client, game.id) == before


def test_a_move_as_form_data_is_415(lane_client, redis_client):
    game, seat = _game(lane_client)
    before = snapshot(redis_client, game.id)
    response = lane_client.post(
        f"/v1/games/{game.id}/moves",
        data={"type": "draw", "source": "stock"},
        headers=game.auth(seat),
    )
    _problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    response = lane_client.post(
        f"/v1/games/{game.id}/moves", data=orjson.dumps(DRAW), headers=game.auth(seat)
    )
    _problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")  # no Content-Type at all
    assert snapshot(redis_client, game.id) == before


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/json; charset=utf-8", "Application/JSON; Charset=UTF-8",
     "application/problem+json"],
)  # fmt: skip
def test_json_media_types_are_accepted(lane_client, content_type):
    game, seat = _game(lane_client)
    response = lane_client.post(
        f"/v1/games/{game.id}/moves",
        data=orjson.dumps(DRAW),
        headers={**game.auth(seat), "Content-Type": content_type},
    )
    assert response.status_code == 200, response.get_json()


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_other_json_endpoints_not_sent_as_json_are_415(lane_client, redis_client, content_type):
    game = create_game(lane_client, [{"name": "a"}], seats=2, seed="415")
    before = snapshot(redis_client, game.id)
    keys = sorted(redis_client.scan_iter(match="t13:*"))
    for path, body in [
        ("/v1/games", {"players": [{"name": "a"}, {"name": "b"}]}),
        (f"/v1/games/{game.id}/players", {"name": "b"}),
        ("/v1/hands/evaluate", {"cards": ["AH"], "wild_rank": "7"}),
    ]:
        response = lane_client.post(
            path, data=orjson.dumps(body), headers={"Content-Type": content_type}
        )
        _problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert snapshot(redis_client, game.id) == before
    assert sorted(redis_client.scan_iter(match="t13:*")) == keys


def test_an_empty_body_without_content_type_is_no_body(lane_client):
    game, seat = _game(lane_client)
    # a move needs one: 400, as an empty JSON body
    response = lane_client.post(f"/v1/games/{game.id}/moves", headers=game.auth(seat))
    _problem(response, 400, "INVALID_JSON")
    # a seat handed to the autopilot takes the default level with no body at all
    response = lane_client.post(f"/v1/games/{game.id}/autopilot", headers=game.auth(seat))
    assert response.status_code == 200, response.get_json()


# -- defect 7: names ---------------------------------------------------------------

BAD_NAMES = [
    "a\u0085b",  # NEL, a C1 control
    "a\u009bb",  # CSI, a C1 control
    "a\u2028b",  # line separator (Zl)
    "a\u2029b",  # paragraph separator (Zp)
    "\ufeffann",  # BOM (Cf)
    "bob\u202egnp.exe",  # right-to-left override (Cf)
    "a\u2066b\u2069",  # bidi isolates (Cf)
    "a\u200bb",  # zero-width space (Cf)
    "a\u00adb",  # soft hyphen (Cf)
    "a\ue000b",  # private use (Co)
    "a\U000f0000b",  # supplementary private use (Co)
    "a\u0378b",  # unassigned (Cn)
    " ann",
    "ann ",
    "ann\n",
    "\u3000ann",  # ideographic space, leading
    "ann\u00a0",  # no-break space, trailing
    "\t",
]


@pytest.mark.parametrize("name", BAD_NAMES, ids=[ascii(n) for n in BAD_NAMES])
def test_names_that_disguise_themselves_are_422(lane_client, redis_client, name):
    response = lane_client.post("/v1/games", json={"players": [{"name": name}, {"name": "b"}]})
    _problem(response, 422, "VALIDATION_ERROR")
    assert not list(redis_client.scan_iter(match="t13:*"))
    game = create_game(lane_client, [{"name": "a"}], seats=2, seed="names")
    before = snapshot(redis_client, game.id)
    _problem(lane_client.post(f"/v1/games/{game.id}/players", json={"name": name}), 422)
    assert snapshot(redis_client, game.id) == before


def test_a_lone_surrogate_in_a_name_is_4xx(lane_client, redis_client):
    response = lane_client.post(
        "/v1/games",
        data=b'{"players": [{"name": "a\\ud800"}, {"name": "b"}]}',
        headers={"Content-Type": "application/json"},
    )
    assert 400 <= response.status_code < 500 and response.mimetype == PROBLEM
    assert not list(redis_client.scan_iter(match="t13:*"))


def test_names_are_stored_nfc_and_other_scripts_stay_welcome(lane_client):
    decomposed = "Zoe\u0308 Ma\u0301rquez"
    game = create_game(
        lane_client, [{"name": decomposed}, {"name": "李小龍"}, {"name": "Ωmega 7"}], seed="nfc"
    )
    names = [p["name"] for p in game.public()["players"]]
    assert names == [unicodedata.normalize("NFC", decomposed), "李小龍", "Ωmega 7"]
    assert names[0] == "Zoë Márquez"


def test_a_name_of_40_characters_after_nfc_is_accepted(lane_client):
    name = "e\u0301" * 40  # 80 code points, 40 once composed
    game = create_game(lane_client, [{"name": name}, {"name": "b"}], seed="nfc40")
    assert game.public()["players"][0]["name"] == "\u00e9" * 40


# -- defect 7: strict numbers, cards and queries ------------------------------------

TWO = [{"name": "a"}, {"name": "b"}]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("seats", 2.5),
        ("seats", 2.0),
        ("seats", "2"),
        ("seats", True),
        ("turn_timeout_seconds", "60"),
        ("turn_timeout_seconds", 60.5),
        ("turn_timeout_seconds", 60.0),
        ("turn_timeout_seconds", True),
        ("autopilot_after_missed_turns", "3"),
        ("autopilot_after_missed_turns", 3.0),
        ("autopilot_after_missed_turns", True),
    ],
)
def test_creation_integers_are_strict(lane_client, redis_client, field, value):
    response = lane_client.post("/v1/games", json={"players": TWO, field: value})
    body = _problem(response, 422, "VALIDATION_ERROR")
    assert field in body["errors"], body
    assert not list(redis_client.scan_iter(match="t13:*"))


@pytest.mark.parametrize("value", ["1", 1.0, 1.5, True, False])
def test_evaluate_round_is_a_strict_integer(lane_client, value):
    response = lane_client.post("/v1/hands/evaluate", json={"cards": ["AH"], "round": value})
    body = _problem(response, 422, "VALIDATION_ERROR")
    assert "round" in body["errors"], body


@pytest.mark.parametrize(
    "options", [{"all_wild_melds": "true"}, {"all_wild_melds": 1}, {"max_turns_per_round": 50.0}]
)
def test_option_values_are_strict(lane_client, options):
    response = lane_client.post("/v1/games", json={"players": TWO, "options": options})
    _problem(response, 422)


SPACED_CARDS = [" AH", "AH ", "A H", "\tAH", "AH\n", "\u00a0AH", "ＡH", "A\u0301H", "7H\x00"]


@pytest.mark.parametrize("card", SPACED_CARDS, ids=[ascii(c) for c in SPACED_CARDS])
def test_card_codes_are_exact(lane_client, redis_client, card):
    game, seat = _game(lane_client)
    assert _post_move(game, seat, orjson.dumps(DRAW)).status_code == 200
    hand = game.view(seat)["hand"]
    before = snapshot(redis_client, game.id)
    # a held card with the odd character added, so only the character can be refused
    held = card.replace("AH", hand[0]) if "AH" in card else card
    for move in (
        {"type": "discard", "card": held},
        {"type": "go_out", "discard": held},
        {"type": "go_out", "discard": hand[1], "melds": [[held, hand[2], hand[3]]]},
    ):
        response = _post_move(game, seat, orjson.dumps(move))
        _problem(response, 422)
        assert snapshot(redis_client, game.id) == before, move
    for body in (
        {"cards": [card], "wild_rank": "7"},
        {"cards": ["AS"], "wild_rank": "7", "table": [[card, "2H", "3H"]]},
    ):
        _problem(lane_client.post("/v1/hands/evaluate", json=body), 422)


def test_lower_case_and_t_still_accepted(lane_client):
    response = lane_client.post(
        "/v1/hands/evaluate", json={"cards": ["th", "jh", "qh", "7s"], "wild_rank": "t"}
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["wild_rank"] == "10"


@pytest.mark.parametrize("rank", ["7\n", " 7", "７", "10 "])
def test_wild_rank_is_exact(lane_client, rank):
    _problem(lane_client.post("/v1/hands/evaluate", json={"cards": ["AH"], "wild_rank": rank}), 422)


@pytest.mark.parametrize(
    "query",
    ["after=１", "after=1_0", "after=+1", "after= 1", "after=1 ", "after=٣", "after=0x1",
     "wait=１", "wait=1_0", "wait=+1", "wait=1e1", "wait= 1", "wait=٣", "wait=.5e0"],
)  # fmt: skip
def test_event_queries_take_ascii_digits_only(lane_client, query):
    game, _seat = _game(lane_client)
    name, value = query.split("=", 1)
    response = lane_client.get(f"/v1/games/{game.id}/events?{name}={quote(value)}")
    body = _problem(response, 422, "VALIDATION_ERROR")
    assert name in body["errors"], body


def test_event_queries_in_ascii_digits_still_work(lane_client):
    game, _seat = _game(lane_client)
    for query in ("after=0", "after=3", "wait=0", "wait=0.5", "after=1&wait=0.0"):
        response = lane_client.get(f"/v1/games/{game.id}/events?{query}")
        assert response.status_code == 200, (query, response.get_json())


@pytest.mark.parametrize("length", ["²", "１", "٣", " 5", "-1", "5 "])
def test_a_content_length_not_in_ascii_digits_is_never_a_500(lane_client, redis_client, length):
    game, seat = _game(lane_client)
    before = snapshot(redis_client, game.id)
    environ = EnvironBuilder(
        path=f"/v1/games/{game.id}/moves",
        method="POST",
        headers={**game.auth(seat), "Content-Type": "application/json"},
        data=orjson.dumps(DRAW),
    ).get_environ()
    environ["CONTENT_LENGTH"] = length  # as a lenient server might pass it on
    app_iter, status, headers = run_wsgi_app(lane_client.application, environ, buffered=True)
    code = int(status.split()[0])
    assert 400 <= code < 500, (status, b"".join(app_iter)[:200])
    assert dict(headers)["Content-Type"] == PROBLEM
    assert snapshot(redis_client, game.id) == before
