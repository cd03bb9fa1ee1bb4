"""No anonymous request can make the service do more than a bounded amount of
work (issue 39): in a game whose every seat is on autopilot, a read of the game
plays at most one stretch of bot moves (:data:`BOT_MOVES_PER_CALL`), and a read
of its events plays none.  The bots' turns move to their own workers later; the
bound holds until then."""

from __future__ import annotations

from collections import Counter

from service.hosting.bot_turns import BOT_MOVES_PER_CALL
from tests.api.conftest import create_game

MOVES = frozenset({"drew", "discarded", "went_out"})
"""The event types of a player's (or a bot's) move."""


def test_an_anonymous_read_plays_at_most_one_stretch_of_bot_moves(client):
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="anonymous-work")
    for seat in (0, 1):  # every seat on autopilot: the game plays itself when touched
        on = client.post(
            f"/v1/games/{game.id}/autopilot", json={"level": "basic"}, headers=game.auth(seat)
        )
        assert on.status_code == 200, on.get_json()
    last = game.events()[-1]["seq"]
    stretches = []
    for _read in range(8):
        assert client.get(f"/v1/games/{game.id}").status_code == 200  # anonymous
        page = client.get(f"/v1/games/{game.id}/events?after={last}").get_json()
        moves = Counter(e["type"] for e in page["events"] if e["type"] in MOVES)
        stretches.append(sum(moves.values()))
        last = page["last_seq"]
        # a read of the events alone plays nothing
        again = client.get(f"/v1/games/{game.id}/events?after={last}").get_json()
        assert again["events"] == [] and again["last_seq"] == last
    assert all(0 < moves <= BOT_MOVES_PER_CALL for moves in stretches), stretches
