"""The reference bot (and its EventFeed) across a rollback of the game's store.

Two client bots play over SSE on a real gunicorn and a real redis-server.  The
server is snapshotted mid-game, the bots play on (moves acknowledged), then it
is killed and started again from the snapshot: the moves after it are lost.
Each bot's feed is told with a reset naming the last event both histories
share, the bot forgets what it had after it, reads the view again and plays the
game to its end: what it keeps is exactly the restored history's events of its
seat, nothing missed, nothing repeated.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.gunicorn_server import GunicornServer
from harness.redis_server import RedisServer
from service.bots.api_client import Client
from service.bots.seat_client import Player
from service.store.keys import EVENTS, key
from tests.bots.game_setup import create_game, event_log, seat_tokens


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture
def service(redis_server: RedisServer) -> Iterator[GunicornServer]:
    env = {"REDIS_URL": redis_server.url, "SSE_HEARTBEAT_SECONDS": "0.5"}
    with GunicornServer(env) as server:
        yield server


def _until(players: list[Player], moves: int, games: list) -> None:  # type: ignore[type-arg]
    deadline = time.monotonic() + 60
    while sum(p.moves_made for p in players) < moves:
        assert time.monotonic() < deadline and not any(g.done() for g in games)
        time.sleep(0.01)


def test_bots_recover_from_a_rollback_with_nothing_dropped(
    service: GunicornServer, redis_server: RedisServer
) -> None:
    created = create_game(service.url, [{"name": "a"}, {"name": "b"}], "bot-rollback")
    tokens = seat_tokens(created)
    clients = [Client(service.url, created["id"], token) for token in tokens]
    players = [
        Player(client, "basic", random.Random(i), log=lambda _: None)
        for i, client in enumerate(clients)
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        games = [pool.submit(p.play) for p in players]
        _until(players, 10, games)
        snapshot = redis_server.snapshot()
        _until(players, 30, games)
        redis_server.roll_back(snapshot)
        finals = [g.result(timeout=180) for g in games]

    assert all(f["status"] == "finished" for f in finals)
    client = redis_server.client()
    try:
        stored = client.xrange(key(created["id"], EVENTS))
        tags = [fields[b"g"].decode() for _entry, fields in stored]
    finally:
        client.close()
    before = tags[0][8:]  # the epoch of the run the snapshot was taken in
    shared_seq = sum(1 for tag in tags if tag[8:] == before)
    assert tags[shared_seq][8:] != before  # the events after it: another run's
    for seat, (player, token) in enumerate(zip(players, tokens, strict=True)):
        feed = player.feed
        assert feed is not None
        assert [r["shared_seq"] for r in feed.resets] == [shared_seq]
        assert feed.resets[0]["shared_id"] == f"{shared_seq}.{tags[shared_seq - 1]}"
        assert feed.duplicates == 0
        # every event of the seat in the restored history, once, in order
        assert player.received == event_log(service.url, created["id"], seat, token)
        assert player.history[-1]["type"] == "game_finished"
    assert players[0].history == players[1].history
