"""Odd conditional headers (If-Match, If-None-Match), on both paths (defect 6): a 412 or
304 where RFC 9110 says so, never a 500, and the game in Redis exactly as before."""

from __future__ import annotations

import orjson
import pytest

from tests.hardening.conftest import snapshot
from tests.hardening.strict import DRAW, new_game, post_move, problem


@pytest.mark.parametrize(
    "if_match",
    ['""', '"3", ""', '"", "2"', '""""', 'W/""', '" "', '"2"x', '"0x2"', '"+2"', '"２"', '",'],
)
def test_odd_if_match_is_412_and_changes_nothing(lane_client, redis_client, if_match):
    game, seat = new_game(lane_client)
    before = snapshot(redis_client, game.id)
    response = post_move(game, seat, orjson.dumps(DRAW), **{"If-Match": if_match})
    body = problem(response, 412, "PRECONDITION_FAILED")
    assert body["current_version"] == 1
    assert snapshot(redis_client, game.id) == before


def test_if_match_ahead_of_the_game_says_the_game_lost_changes(lane_client, redis_client):
    """A client that saw version 5 of a game now at 1 (the store failed over and lost
    the changes it saw) is told so, not that its version is stale."""
    game, seat = new_game(lane_client)
    before = snapshot(redis_client, game.id)
    response = post_move(game, seat, orjson.dumps(DRAW), **{"If-Match": '"5"'})
    body = problem(response, 412, "PRECONDITION_FAILED")
    assert body["title"] == "Version mismatch" and body["current_version"] == 1
    assert "lost changes" in body["detail"] and "reload" in body["detail"]
    stale = post_move(game, seat, orjson.dumps(DRAW), **{"If-Match": '"0"'})
    assert "lost" not in problem(stale, 412, "PRECONDITION_FAILED")["detail"]
    assert snapshot(redis_client, game.id) == before


def test_if_match_naming_the_version_still_applies(lane_client):
    game, seat = new_game(lane_client)
    for if_match in ('"1"', ' "1" ', "*"):
        game, seat = new_game(lane_client, seed=f"match-{if_match.strip()}")
        response = post_move(game, seat, orjson.dumps(DRAW), **{"If-Match": if_match})
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
    game, seat = new_game(lane_client)
    for path, headers in (
        (f"/v1/games/{game.id}", {}),
        (f"/v1/games/{game.id}/view", game.auth(seat)),
    ):
        response = lane_client.get(path, headers={**headers, "If-None-Match": if_none_match})
        assert response.status_code == status, (path, if_none_match, response.status_code)
