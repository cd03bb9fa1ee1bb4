"""Hidden information through the seat changes that keep a seat's holder (issue 39
item 1; leaving and rejoining are in test_stream_seat_changes.py): a seat handed to
the autopilot, a seat resigned, and a rematch.  Each seat's private events reach its
own token only -- the autopilot's and the resigned player's included -- never another
seat's token nor an anonymous reader, and a finished game's tokens see nothing of
its rematch."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Game, create_game, until

PLAYERS = [{"name": "ann"}, {"name": "bob"}, {"name": "cat"}]


def _events(game: Game, seat: int | None) -> list[dict[str, Any]]:
    return game.events(seat)


def _check_private(game: Game) -> int:
    """Every private event each seat's token reads is that seat's, and the public
    reader sees none; the number of private events seen in all."""
    assert not [e for e in _events(game, None) if e.get("private")]
    seen = 0
    for seat in game.tokens:
        private = [e for e in _events(game, seat) if e.get("private")]
        assert private, f"seat {seat} sees its own hand"
        assert {e["seat"] for e in private} == {seat}, private[:3]
        seen += len(private)
    return seen


def claimed_auth(claimed: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {claimed['token']}"}


def test_autopilot_and_resign_keep_each_hand_to_its_own_seat(client):
    game = create_game(client, PLAYERS, seed="seat-change-secrets")
    url = f"/v1/games/{game.id}"
    on = client.post(f"{url}/autopilot", json={"level": "basic"}, headers=game.auth(0))
    assert on.status_code == 200, on.get_json()
    resigned = client.post(f"{url}/resign", headers=game.auth(1))
    assert resigned.status_code == 200, resigned.get_json()
    on = client.post(f"{url}/autopilot", json={"level": "strong"}, headers=game.auth(2))
    assert on.status_code == 200, on.get_json()
    before = _check_private(game)
    # every seat a bot's now: the bot worker plays the game to the end
    until(lambda: client.get(url).get_json()["status"] == "finished", timeout=180, pause=0.1)
    assert _check_private(game) > before  # the bots' hands and draws, each to its seat

    # a rematch: the finished game's tokens see nothing of it
    claimed = client.post(f"{url}/rematch", headers=game.auth(0))
    assert claimed.status_code == 201, claimed.get_json()
    rematch = claimed.get_json()["id"]
    for seat in game.tokens:
        view = client.get(f"/v1/games/{rematch}/view", headers=game.auth(seat))
        assert view.status_code in (401, 403), view.get_json()
        page = client.get(f"/v1/games/{rematch}/events", headers=game.auth(seat))
        assert page.status_code in (401, 403), page.get_json()
    joined = client.get(f"/v1/games/{rematch}/view", headers=claimed_auth(claimed.get_json()))
    assert joined.status_code == 200  # its own token does
