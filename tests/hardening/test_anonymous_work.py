"""No anonymous request can make the service do more than a bounded amount of
work (issues 39 and 42): in a game whose every seat is on autopilot, no read plays
a bot's move -- not of the game, its events, nor its replay: the bots play in their
own workers (:mod:`service.botplay`)."""

from __future__ import annotations

from collections.abc import Callable

from service.botplay.worker import BotWorker
from tests.api.conftest import create_game, make_app, until


def test_no_read_plays_a_bot_move(
    redis_client: object, redis_url: str, bots_for: Callable[..., BotWorker]
) -> None:
    app = make_app(redis_url)  # no bot worker yet: whatever moves, a request moved it
    client = app.test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="anonymous-work")
    for seat in (0, 1):  # every seat on autopilot: the bots are due at once
        on = client.post(
            f"/v1/games/{game.id}/autopilot", json={"level": "basic"}, headers=game.auth(seat)
        )
        assert on.status_code == 200, on.get_json()
    before = game.public()
    last = game.events()[-1]["seq"]
    for _read in range(8):  # anonymous reads of every kind
        assert client.get(f"/v1/games/{game.id}").status_code == 200
        page = client.get(f"/v1/games/{game.id}/events?after={last}&wait=0").get_json()
        assert page["events"] == [] and page["last_seq"] == last
        assert client.get(f"/v1/games/{game.id}/replay").status_code == 409
        assert client.get(f"/v1/games/{game.id}/view").status_code == 401
    assert game.public() == before  # the game is where it was
    bots_for(app, sweeps=True)  # a worker finds the game due, and plays it
    until(lambda: game.public()["version"] > before["version"])
