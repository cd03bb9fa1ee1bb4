"""The finished replay's cache, side by side: ``GET /v1/games/{id}/replay`` of one
large finished game answered from the saved replay, and built from the log each
time (the saved replay deleted before each request), in turns, on a throwaway
redis-server.  Prints the median and p90 of each and the saving.

    .venv/bin/python bench/replay_cache.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.redis_server import RedisServer  # noqa: E402
from service.app import create_app  # noqa: E402
from service.config import Config  # noqa: E402
from service.store import GameStore, connect  # noqa: E402
from service.store.keys import EVENTS, REPLAY, key  # noqa: E402

SEATS = 8
OPTIONS = {"extra_rounds": 2, "round_order": "up_down"}


def finished_game(client: Any) -> str:
    """A game of ``SEATS`` humans, all on autopilot, played to its end."""
    players = [{"name": f"p{i}"} for i in range(SEATS)]
    made = client.post("/v1/games", json={"players": players, "options": OPTIONS}).get_json()
    for player in made["players"]:
        auth = {"Authorization": f"Bearer {player['token']}"}
        on = client.post(f"/v1/games/{made['id']}/autopilot", json={"level": "basic"}, headers=auth)
        assert on.status_code == 200, on.get_json()
    for _request in range(100_000):
        if client.get(f"/v1/games/{made['id']}").get_json()["status"] == "finished":
            return str(made["id"])
    raise AssertionError("the game did not finish")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=40)
    rounds = parser.parse_args().rounds
    with RedisServer() as server:
        redis_client = server.client()
        config = Config.from_env({"REDIS_URL": server.url, "RATE_LIMITS": "false"})
        client = create_app(config, GameStore(connect(config), config=config)).test_client()
        game_id = finished_game(client)
        url = f"/v1/games/{game_id}/replay"
        events = redis_client.xlen(key(game_id, EVENTS))
        assert client.get(url).status_code == 200  # saved
        times: dict[str, list[float]] = {"cached": [], "built": []}
        for _round in range(rounds):
            for mode in ("cached", "built"):
                if mode == "built":
                    redis_client.delete(key(game_id, REPLAY))
                began = time.perf_counter()
                answer = client.get(url)
                times[mode].append(time.perf_counter() - began)
                assert answer.status_code == 200
        size = len(client.get(url).get_data())
    print(f"game: {SEATS} seats, {events} events, replay {size:,} bytes; {rounds} requests each")
    for mode, measured in times.items():
        values = sorted(measured)
        p90 = values[int(0.9 * (len(values) - 1))]
        median = statistics.median(values)
        print(f"{mode:>7}: median {median * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms")
    slower = sum(b > a for a, b in zip(times["cached"], times["built"], strict=True))
    print(f"pairs where the built replay was slower: {slower} of {rounds}")
    saving = 1 - statistics.median(times["cached"]) / statistics.median(times["built"])
    print(f"saving: {saving:.0%} of the median")


if __name__ == "__main__":
    main()
