"""Client input parsed strictly, on both paths (the fast lane and Flask): values of
exactly their JSON type and characters -- a move's type, integers that are not
floats, strings or booleans, card codes, wild ranks, query numbers and a
Content-Length with nothing beyond their ASCII characters (defects 6 and 7).  Each
answer is a 4xx problem+json and the game in Redis is exactly as before."""

from __future__ import annotations

from urllib.parse import quote

import orjson
import pytest
from werkzeug.test import EnvironBuilder, run_wsgi_app

from tests.hardening.conftest import snapshot
from tests.hardening.strict import DRAW, PROBLEM, new_game, post_move, problem


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
    game, seat = new_game(lane_client)
    before = snapshot(redis_client, game.id)
    response = post_move(game, seat, orjson.dumps(body))
    problem(response, 422, "VALIDATION_ERROR")
    assert snapshot(redis_client, game.id) == before


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
    body = problem(response, 422, "VALIDATION_ERROR")
    assert field in body["errors"], body
    assert not list(redis_client.scan_iter(match="t13:*"))


@pytest.mark.parametrize("value", ["1", 1.0, 1.5, True, False])
def test_evaluate_round_is_a_strict_integer(lane_client, value):
    response = lane_client.post("/v1/hands/evaluate", json={"cards": ["AH"], "round": value})
    body = problem(response, 422, "VALIDATION_ERROR")
    assert "round" in body["errors"], body


@pytest.mark.parametrize(
    "options", [{"all_wild_melds": "true"}, {"all_wild_melds": 1}, {"max_turns_per_round": 50.0}]
)
def test_option_values_are_strict(lane_client, options):
    response = lane_client.post("/v1/games", json={"players": TWO, "options": options})
    problem(response, 422)


SPACED_CARDS = [" AH", "AH ", "A H", "\tAH", "AH\n", "\u00a0AH", "ＡH", "A\u0301H", "7H\x00"]


@pytest.mark.parametrize("card", SPACED_CARDS, ids=[ascii(c) for c in SPACED_CARDS])
def test_card_codes_are_exact(lane_client, redis_client, card):
    game, seat = new_game(lane_client)
    assert post_move(game, seat, orjson.dumps(DRAW)).status_code == 200
    hand = game.view(seat)["hand"]
    before = snapshot(redis_client, game.id)
    # a held card with the odd character added, so only the character can be refused
    held = card.replace("AH", hand[0]) if "AH" in card else card
    for move in (
        {"type": "discard", "card": held},
        {"type": "go_out", "discard": held},
        {"type": "go_out", "discard": hand[1], "melds": [[held, hand[2], hand[3]]]},
    ):
        response = post_move(game, seat, orjson.dumps(move))
        problem(response, 422)
        assert snapshot(redis_client, game.id) == before, move
    for body in (
        {"cards": [card], "wild_rank": "7"},
        {"cards": ["AS"], "wild_rank": "7", "table": [[card, "2H", "3H"]]},
    ):
        problem(lane_client.post("/v1/hands/evaluate", json=body), 422)


def test_lower_case_and_t_still_accepted(lane_client):
    response = lane_client.post(
        "/v1/hands/evaluate", json={"cards": ["th", "jh", "qh", "7s"], "wild_rank": "t"}
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["wild_rank"] == "10"


@pytest.mark.parametrize("rank", ["7\n", " 7", "７", "10 "])
def test_wild_rank_is_exact(lane_client, rank):
    problem(lane_client.post("/v1/hands/evaluate", json={"cards": ["AH"], "wild_rank": rank}), 422)


@pytest.mark.parametrize(
    "query",
    ["after=１", "after=1_0", "after=+1", "after= 1", "after=1 ", "after=٣", "after=0x1",
     "wait=１", "wait=1_0", "wait=+1", "wait=1e1", "wait= 1", "wait=٣", "wait=.5e0"],
)  # fmt: skip
def test_event_queries_take_ascii_digits_only(lane_client, query):
    game, _seat = new_game(lane_client)
    name, value = query.split("=", 1)
    response = lane_client.get(f"/v1/games/{game.id}/events?{name}={quote(value)}")
    body = problem(response, 422, "VALIDATION_ERROR")
    assert name in body["errors"], body


def test_event_queries_in_ascii_digits_still_work(lane_client):
    game, _seat = new_game(lane_client)
    for query in ("after=0", "after=3", "wait=0", "wait=0.5", "after=1&wait=0.0"):
        response = lane_client.get(f"/v1/games/{game.id}/events?{query}")
        assert response.status_code == 200, (query, response.get_json())


@pytest.mark.parametrize("length", ["²", "１", "٣", " 5", "-1", "5 "])
def test_a_content_length_not_in_ascii_digits_is_never_a_500(lane_client, redis_client, length):
    game, seat = new_game(lane_client)
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


@pytest.mark.parametrize("accept", ["application/json", "text/event-stream"])
@pytest.mark.parametrize("resume", ["x", "１", "+1", str(2**53 + 1)])
def test_a_bad_last_event_id_is_refused_whatever_the_media(lane_client, accept, resume):
    game, _seat = new_game(lane_client)
    headers = {"Accept": accept, "Last-Event-ID": resume}
    response = lane_client.get(f"/v1/games/{game.id}/events", headers=headers)
    body = problem(response, 422, "VALIDATION_ERROR")
    assert "Last-Event-ID" in body["errors"], body
