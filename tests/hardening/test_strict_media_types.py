"""Bodies must be declared JSON, on both paths (defect 7): any other media type is a
415 that changes nothing; the JSON ones are accepted."""

from __future__ import annotations

import orjson
import pytest

from tests.api.conftest import create_game
from tests.hardening.conftest import snapshot
from tests.hardening.strict import DRAW, new_game, problem

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
    game, seat = new_game(lane_client)
    before = snapshot(redis_client, game.id)
    response = lane_client.post(
        f"/v1/games/{game.id}/moves",
        data=orjson.dumps(DRAW),
        headers={**game.auth(seat), "Content-Type": content_type},
    )
    problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert snapshot(redis_client, game.id) == before


def test_a_move_as_form_data_is_415(lane_client, redis_client):
    game, seat = new_game(lane_client)
    before = snapshot(redis_client, game.id)
    response = lane_client.post(
        f"/v1/games/{game.id}/moves",
        data={"type": "draw", "source": "stock"},
        headers=game.auth(seat),
    )
    problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    response = lane_client.post(
        f"/v1/games/{game.id}/moves", data=orjson.dumps(DRAW), headers=game.auth(seat)
    )
    problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")  # no Content-Type at all
    assert snapshot(redis_client, game.id) == before


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/json; charset=utf-8", "Application/JSON; Charset=UTF-8",
     "application/problem+json"],
)  # fmt: skip
def test_json_media_types_are_accepted(lane_client, content_type):
    game, seat = new_game(lane_client)
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
        problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert snapshot(redis_client, game.id) == before
    assert sorted(redis_client.scan_iter(match="t13:*")) == keys


def test_an_empty_body_without_content_type_is_no_body(lane_client):
    game, seat = new_game(lane_client)
    # a move needs one: 400, as an empty JSON body
    response = lane_client.post(f"/v1/games/{game.id}/moves", headers=game.auth(seat))
    problem(response, 400, "INVALID_JSON")
    # a seat handed to the autopilot takes the default level with no body at all
    response = lane_client.post(f"/v1/games/{game.id}/autopilot", headers=game.auth(seat))
    assert response.status_code == 200, response.get_json()
