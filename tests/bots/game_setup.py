"""Creating hosted games for the bot client's tests, and reading a seat's whole event log."""

from __future__ import annotations

from typing import Any

import requests

from harness.live_game import LiveGame


def create_game(url: str, players: list[dict[str, Any]], seed: str) -> dict[str, Any]:
    """``POST /v1/games`` with a seed; the answer holds a token for each human seat."""
    answer = requests.post(url + "/v1/games", json={"players": players, "seed": seed}, timeout=30)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def seat_tokens(created: dict[str, Any]) -> list[str]:
    """The tokens of the human seats, in seat order."""
    return [p["token"] for p in created["players"] if "token" in p]


def event_log(url: str, game_id: str, seat: int, token: str) -> list[int]:
    """The seq of every event the seat may see, through the JSON long poll (no wait)."""
    game = LiveGame(url, game_id, {seat: token}, requests.Session())
    return [event["seq"] for event in game.events(seat)]
