"""Server-side bots over HTTP: one request per human move, public history only."""

from __future__ import annotations

import pytest

from service import bots
from tests.api.conftest import create_game
from tests.api.test_play import choose


def test_one_human_three_bots_one_move_request_per_human_move(client):
    game = create_game(
        client,
        [
            {"name": "me"},
            {"name": "r", "bot": "random"},
            {"name": "b", "bot": "basic"},
            {"name": "s", "bot": "strong"},
        ],
        seed="one-human",
        options={"max_turns_per_round": 80},
    )
    view = game.turn_of(0)
    requests = 0
    while view["status"] != "finished":
        assert view["round"]["turn"] == 0, "after each answer it is the human's turn again"
        response = game.move(0, choose(view))
        requests += 1
        assert response.status_code == 200, response.get_json()
        # one change, the human's move alone: the bot worker plays the bots' turns
        assert response.get_json()["version"] == view["version"] + 1
        view = game.turn_of(0)
    moves_by_human = sum(
        1
        for e in game.events()
        if e.get("seat") == 0 and e["type"] in ("drew", "discarded", "went_out")
    )
    assert requests == moves_by_human
    assert len(view["results"]) == 11
    bot_events = [e for e in game.events() if e.get("bot")]
    assert {e["seat"] for e in bot_events} == {1, 2, 3}


@pytest.mark.parametrize("level", sorted(bots.TRACKING))
def test_tracking_bots_get_public_history_only(client, monkeypatch, level):
    seen: list[list[dict]] = []
    real = bots.BRAINS[level]

    def spy(view, rng, history=None):
        seen.append(history)
        return real(view, rng, history)

    monkeypatch.setitem(bots.BRAINS, level, spy)
    game = create_game(client, [{"name": "me"}, {"name": "s", "bot": level}], seed="spy")
    view = game.turn_of(0)
    for _ in range(6):
        if view["status"] == "finished":
            break
        assert game.move(0, choose(view)).status_code == 200
        view = game.turn_of(0)
    histories = [h for h in seen if h is not None]
    assert histories, f"the {level} bot was given the game's history"
    for history in histories:
        assert all(not e.get("private") for e in history)
        assert not any(e["type"] == "dealt" for e in history)
        assert all(
            "card" not in e for e in history if e["type"] == "drew" and e["source"] == "stock"
        )
    assert any(e["type"] == "round_started" for e in histories[-1])
