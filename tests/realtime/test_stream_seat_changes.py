"""A stream stops carrying a seat's private events the moment its credential stops
holding the seat (issue 39 item 1): bob follows seat 1 of a listed 3-seat game with
his token or a stream ticket, leaves, and the seat is taken by cat, or by bob again
with a new token; the game starts and is played. The old stream goes on as a
spectator's: the public events, and none of the new occupant's hand or draws."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.live_game import LiveGame
from tests.realtime.followers import SSE, Follower


def _post(url: str, **kwargs: Any) -> dict[str, Any]:
    answer = requests.post(url, timeout=10, **kwargs)
    assert answer.status_code in (200, 201), answer.text
    return answer.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("credential", ["token", "ticket"])
@pytest.mark.parametrize("newcomer", ["cat", "bob"])
def test_a_stream_stops_seeing_a_seat_its_credential_left(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer],
    redis_url: str,
    follow: Callable[..., Follower],
    credential: str,
    newcomer: str,
) -> None:
    server = gunicorn(
        {"REDIS_URL": redis_url, "WEB_CONCURRENCY": "1", "SSE_HEARTBEAT_SECONDS": "0.3"}
    )
    created = _post(
        f"{server.url}/v1/games", json={"players": [{"name": "ann"}], "seats": 3, "listed": True}
    )
    game_url = f"{server.url}/v1/games/{created['id']}"
    bob = _post(f"{game_url}/players", json={"name": "bob", "seat": 1})["token"]
    bob_auth = {"Authorization": f"Bearer {bob}"}
    if credential == "token":
        old = follow(f"{game_url}/events", {**SSE, **bob_auth})
    else:
        ticket = _post(f"{game_url}/stream-tickets", headers=bob_auth)["ticket"]
        old = follow(f"{game_url}/events", SSE, {"ticket": ticket})
    old.wait_for(2)  # bob's own player_joined

    left = requests.delete(f"{game_url}/seat", headers=bob_auth, timeout=10)
    assert left.status_code == 200, left.text
    tokens = {0: created["players"][0]["token"]}
    tokens[1] = _post(f"{game_url}/players", json={"name": newcomer, "seat": 1})["token"]
    tokens[2] = _post(f"{game_url}/players", json={"name": "dan", "seat": 2})["token"]
    game = LiveGame(server.url, created["id"], tokens, requests.Session())
    assert game.public()["status"] == "playing"
    for _move in range(9):
        assert game.step()

    public = game.events()
    old.wait_for(public[-1]["seq"])
    assert old.events() == public, "the old stream is a spectator's once bob left"
    assert not [e for e in old.events() if e.get("private")]
    seat_one = game.events(1)
    assert any(e.get("private") and e["type"] == "dealt" for e in seat_one), "hidden, not absent"
