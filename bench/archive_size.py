"""Bytes of a finished game's archive next to its live keys', for 2 and 8 players.

Each game (classic rules, every seat a human on autopilot, played out by a bot worker
in this process) is finished, its replay read once (so the live keys hold the saved
replay too, as once anyone asked for it), and archived by the bot worker's archiver.
Printed: the live keys' ``MEMORY USAGE`` (state hash, event stream, saved replay,
whatever else the game's tag holds; and without the saved replay), the archive's
``MEMORY USAGE`` and its length (compressed), and the archive's JSON before
compression, on a throwaway redis-server.

    .venv/bin/python bench/archive_size.py [--games 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.redis_server import RedisServer  # noqa: E402
from service.app import create_app  # noqa: E402
from service.botplay.worker import BotWorker  # noqa: E402
from service.config import Config  # noqa: E402
from service.store import GameStore, connect  # noqa: E402
from service.store.keys import REPLAY, archive_key, key  # noqa: E402


def finished_game(client: Any, seats: int) -> str:
    """A game of ``seats`` humans, all on autopilot, played to its end."""
    players = [{"name": f"player{i}"} for i in range(seats)]
    made = client.post("/v1/games", json={"players": players}).get_json()
    for player in made["players"]:
        auth = {"Authorization": f"Bearer {player['token']}"}
        on = client.post(f"/v1/games/{made['id']}/autopilot", json={"level": "basic"}, headers=auth)
        assert on.status_code == 200, on.get_json()
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if client.get(f"/v1/games/{made['id']}").get_json()["status"] == "finished":
            return str(made["id"])
        time.sleep(0.2)
    raise AssertionError("the game did not finish")


def measure(client: Any, redis_client: Any, seats: int) -> dict[str, int]:
    game_id = finished_game(client, seats)
    assert client.get(f"/v1/games/{game_id}/replay").status_code == 200  # saved replay
    deadline = time.monotonic() + 60
    while redis_client.get(archive_key(game_id)) is None:
        assert time.monotonic() < deadline, "not archived"
        time.sleep(0.05)
    live = list(redis_client.scan_iter(match=f"t13:{{{game_id}}}:*"))
    stored = redis_client.get(archive_key(game_id))
    replay = redis_client.memory_usage(key(game_id, REPLAY), samples=0)
    live_bytes = sum(int(redis_client.memory_usage(k, samples=0)) for k in live)
    return {
        "live": live_bytes,
        "no_replay": live_bytes - int(replay or 0),
        "archive": int(redis_client.memory_usage(archive_key(game_id), samples=0)),
        "compressed": len(stored),
        "json": len(zlib.decompress(stored)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=3, help="games of each size")
    games = parser.parse_args().games
    with RedisServer() as server:
        redis_client = server.client()
        config = Config.from_env(
            {"REDIS_URL": server.url, "RATE_LIMITS": "false", "BOT_IDLE_MOVE_SECONDS": "0"}
        )
        store = GameStore(connect(config), config=config)
        client = create_app(config, store).test_client()
        worker = BotWorker(store, config).start()
        try:
            print(
                f"{'seats':>5} {'live bytes':>11} {'w/o replay':>11} {'archive':>9}"
                f" {'zlib len':>9} {'JSON':>9}"
            )
            for seats in (2, 8):
                rows = [measure(client, redis_client, seats) for _ in range(games)]
                med = {k: int(statistics.median(r[k] for r in rows)) for k in rows[0]}
                print(
                    f"{seats:>5} {med['live']:>11,} {med['no_replay']:>11,} {med['archive']:>9,} "
                    f"{med['compressed']:>9,} {med['json']:>9,}"
                    f"   (median of {games}; live/archive {med['live'] / med['archive']:.0f}x)"
                )
        finally:
            worker.stop()


if __name__ == "__main__":
    main()
