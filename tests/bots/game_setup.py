"""Creating hosted games for the bot client's tests, and reading a seat's whole event log."""

from __future__ import annotations

from typing import Any

import requests


def create_game(url: str, players: list[dict[str, Any]], seed: str) -> dict[str, Any]:
    """``POST /v1/games`` with a seed; the answer holds a token for each human seat."""
    answer = requests.post(url + "/v1/games", json={"players": players, "seed": seed}, timeout=30)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def seat_tokens(created: dict[str, Any]) -> list[str]:
    """The tokens of the human seats, in seat order."""
    return [p["token"] for p in created["players"] if "token" in p]


def event_log(url: str, game_id: str, token: str) -> list[int]:
    """The seq of every event the seat may see, through the JSON long poll (no wait)."""
    seqs: list[int] = []
    after = 0
    while True:
        answer = requests.get(
            f"{url}/v1/games/{game_id}/events",
            params={"after": after},
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
        page = answer.json()
        seqs += [event["seq"] for event in page["events"]]
        if page["last_seq"] == after:
            return seqs
        after = page["last_seq"]
