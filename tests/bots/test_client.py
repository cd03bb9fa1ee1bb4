"""The reference HTTP bot client against a live service (real gunicorn, test Redis)."""

from __future__ import annotations

import json
import random
import urllib.request
from typing import Any

import pytest

from service.bots import seat_client as bot_client
from service.bots.api_client import ApiProblem, Client
from service.bots.seat_client import Player
from service.bots.simulate import play_game
from service.engine.options import Options
from service.engine.shuffle import seed_from_client


def _create(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        url + "/v1/games",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        created: dict[str, Any] = json.loads(resp.read())
    return created


def _new_game(url: str, seed: str) -> tuple[str, str]:
    created = _create(
        url,
        {"players": [{"name": "client"}, {"name": "b", "bot": "basic"}], "seed": seed},
    )
    token = next(p["token"] for p in created["players"] if "token" in p)
    return created["id"], token


# Seeds picked so that the client (basic, seat 0) wins one game and loses the other.
SEEDS = ("client-1", "client-4")


def test_client_plays_seeded_games_to_the_end(live_url: str) -> None:
    outcomes = []
    for seed in SEEDS:
        game_id, token = _new_game(live_url, seed)
        lines: list[str] = []
        player = Player(
            Client(live_url, game_id, token), "basic", random.Random(seed), log=lines.append
        )
        final = player.play()
        assert final["status"] == "finished"
        assert len(final["results"]) == 11
        assert all(any(h["seat"] == final["seat"] for h in r["hands"]) for r in final["results"])
        assert player.moves_made > 11 * 2
        assert lines[-1].startswith("game finished")
        assert any(e["type"] == "round_started" for e in player.history)
        assert not any(e.get("private") for e in player.history)
        outcomes.append(final["seat"] in final["winners"])
        # basic is deterministic: the hosted game is the one the engine plays locally
        local = play_game(("basic", "basic"), Options(), seed_from_client(seed))
        assert [p["total"] for p in final["players"]] == local.totals
    assert any(outcomes) and not all(outcomes), outcomes


def test_client_main_with_the_strong_brain(
    live_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    game_id, token = _new_game(live_url, "client-main")
    code = bot_client.main(
        ["--url", live_url, "--game", game_id, "--token", token, "--level", "strong",
         "--seed", "1"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "round 1:" in out and "game finished" in out


def test_client_reports_a_bad_token(live_url: str) -> None:
    game_id, _token = _new_game(live_url, "client-bad")
    with pytest.raises(ApiProblem) as info:
        Client(live_url, game_id, "not-a-token").view()
    assert info.value.status == 401
    assert bot_client.main(["--url", live_url, "--game", game_id, "--token", "nope"]) == 1
