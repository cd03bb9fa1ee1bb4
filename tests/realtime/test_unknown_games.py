"""Following a game id that does not exist costs no subscription: the 404 is
decided before the follower watches the game (a watch subscribes the game's
wake-up channel, which then lingers for LINGER_SECONDS)."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from service.hosting.tokens import new_game_id
from service.store.keys import wake_channel
from tests.api.conftest import create_game, make_app

PATIENCE_SECONDS = 20.0


def _subscribers(client: redis.Redis, game_id: str) -> int:
    channel = wake_channel(game_id)
    reply = client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
    counts = dict(zip(reply[::2], reply[1::2], strict=True))
    return int(counts[channel.encode()])


@pytest.mark.parametrize("fast_lane", ["true", "false"])
def test_an_unknown_game_is_404_without_subscribing(redis_client, redis_url, fast_lane):
    client = make_app(redis_url, FAST_LANE=fast_lane).test_client()
    unknown = [new_game_id() for _ in range(3)]
    asks = [
        (unknown[0], "?wait=1", {}),
        (unknown[1], "", {"Accept": "text/event-stream"}),
        (unknown[2], "", {"Accept": "application/x-ndjson"}),
    ]
    for game_id, query, headers in asks:
        answer = client.get(f"/v1/games/{game_id}/events{query}", headers=headers)
        assert answer.status_code == 404, answer.get_data()[:200]
        assert answer.get_json()["code"] == "GAME_NOT_FOUND"

    # A real game's long poll subscribes its channel on the same subscriber
    # connection: once Redis counts that subscription, every earlier one would
    # have been counted too (a connection's commands are served in order).
    game = create_game(client, [{"name": "a"}], seats=2)
    answers: list[int] = []
    poll = threading.Thread(
        target=lambda: answers.append(
            client.get(f"/v1/games/{game.id}/events?after=99&wait=10").status_code
        )
    )
    poll.start()
    try:
        deadline = time.monotonic() + PATIENCE_SECONDS
        while _subscribers(redis_client, game.id) < 1:
            assert time.monotonic() < deadline, "the real game's long poll never subscribed"
            time.sleep(0.05)
        assert [_subscribers(redis_client, game_id) for game_id in unknown] == [0, 0, 0]
    finally:
        client.post(f"/v1/games/{game.id}/players", json={"name": "b"})  # ends the poll
        poll.join(PATIENCE_SECONDS)
    assert answers == [200]
