"""The bot client follows its game over SSE, against a real gunicorn and a real Redis.

A whole game (two client bots and a service bot), then a game during which
the service is stopped (SIGTERM: the streams end with the stop notice) and
started again on the same port: the clients resume with ``Last-Event-ID``, and
every event of each seat reaches it exactly once, in order.  Both games are
seeded and played by ``basic`` brains (deterministic), so their totals must be
the engine's own game.
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor

from harness.gunicorn_server import GunicornServer
from service.bots.api_client import Client
from service.bots.seat_client import Player
from service.bots.simulate import play_game
from service.engine.options import Options
from service.engine.shuffle import seed_from_client
from tests.bots.game_setup import create_game, event_log, seat_tokens


def _local_totals(seed: str, seats: int) -> list[int]:
    return play_game(("basic",) * seats, Options(), seed_from_client(seed)).totals


def _players(url: str, game_id: str, tokens: list[str]) -> list[Player]:
    return [
        Player(Client(url, game_id, token), "basic", random.Random(i), log=lambda _: None)
        for i, token in enumerate(tokens)
    ]


def test_bots_play_a_whole_game_over_sse(served: GunicornServer) -> None:
    """Two client bots and a service bot: each client needs one stream for the whole game."""
    seed = "sse-whole-game"
    seats = [{"name": "a"}, {"name": "b"}, {"name": "c", "bot": "basic"}]
    created = create_game(served.url, seats, seed)
    tokens = seat_tokens(created)
    players = _players(served.url, created["id"], tokens)
    with ThreadPoolExecutor(max_workers=2) as pool:
        finals = list(pool.map(lambda p: p.play(), players, timeout=120))

    assert [f["seat"] for f in finals] == [0, 1]
    assert all(f["status"] == "finished" and len(f["results"]) == 11 for f in finals)
    assert [p["total"] for p in finals[0]["players"]] == _local_totals(seed, 3)
    for seat, (player, token) in enumerate(zip(players, tokens, strict=True)):
        assert player.moves_made > 11 * 2
        assert player.feed is not None
        assert player.feed.resumes == [] and player.feed.duplicates == 0
        # Every event of the seat, once, in order: its private ones too, not the others'.
        assert player.received == event_log(served.url, created["id"], seat, token)
        assert len(player.received) > len(player.history)
        assert not any(e.get("private") for e in player.history)
        assert player.history[-1]["type"] == "game_finished"
    assert players[0].history == players[1].history


def test_bots_resume_with_last_event_id_across_a_restart(served: GunicornServer) -> None:
    seed = "sse-restart"
    created = create_game(served.url, [{"name": "a"}, {"name": "b"}], seed)
    tokens = seat_tokens(created)
    players = _players(served.url, created["id"], tokens)
    with ThreadPoolExecutor(max_workers=2) as pool:
        games = [pool.submit(p.play) for p in players]
        deadline = time.monotonic() + 60
        while sum(p.moves_made for p in players) < 20:
            assert time.monotonic() < deadline and not any(g.done() for g in games)
            time.sleep(0.01)
        moves_before = sum(p.moves_made for p in players)
        served.terminate()
        assert served.wait(timeout=15) == 0
        served.start()  # the same port: the clients' URL
        finals = [g.result(timeout=120) for g in games]

    assert all(f["status"] == "finished" for f in finals)
    assert [p["total"] for p in finals[0]["players"]] == _local_totals(seed, 2)
    assert sum(p.moves_made for p in players) > moves_before + 20, "the restart was mid-game"
    for seat, (player, token) in enumerate(zip(players, tokens, strict=True)):
        feed = player.feed
        assert feed is not None
        # The stream ended with the service's notice, and the client came back from
        # where it was: nothing repeated, nothing missed.
        assert feed.stop_notices == 1
        assert len(feed.resumes) >= 1 and feed.resumes[0] in player.received
        assert feed.resumes[0] < player.received[-1]
        assert feed.duplicates == 0
        assert player.received == event_log(served.url, created["id"], seat, token)
