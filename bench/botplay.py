"""Bots in their own worker: a human's wait for the bots' replies, and turn timers' lateness.

    python bench/botplay.py                    # `make bench-botplay` (about 2 minutes)
    python bench/botplay.py --moves 300 --level strong --timer-games 30
    python bench/botplay.py --baseline /path/to/other/checkout   # side by side

Starts its own ``redis-server`` and one gunicorn instance of the service (1 worker)
with its bot worker beside it (``python -m service.botplay``, the shipped settings),
all stopped by PID at the end.

* **Move to reply.** Games of one human and three bots (``--level``) are played over
  HTTP, one game at a time; for each of the human's discards (``--moves`` in all), the
  time from the move's answer (acknowledged) to the long poll of the human's events
  (``after`` the move's event, ``wait=30``) bringing the human's next ``turn`` event --
  the three bots' replies, played by the worker -- and the human's whole wait, from
  sending the move to that event.  p50, p90, p99, max.  With ``--baseline``, the same
  games are played on that checkout too: a tree without a bot worker plays the bots
  inside the move's request, so its answer holds the replies (0 after the answer).
* **Timers.** ``--timer-games`` two-player games with a 5 s turn timer (autopilot
  after 3 missed turns) whose players never call again; every write of each game is
  heard on its wake-up channel, and each automatic move's lateness is when it was
  heard minus the deadline the write before it left.  p50, p99, max.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import redis
import requests

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.gunicorn_server import GunicornServer  # noqa: E402
from harness.live_game import choose  # noqa: E402
from harness.redis_server import RedisServer  # noqa: E402
from service.store.keys import wake_channel  # noqa: E402
from service.store.wakeups import parse_wake_up  # noqa: E402

ENV = {"LOG_LEVEL": "WARNING", "BOT_IDLE_MOVE_SECONDS": "0.25"}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def summary(values: list[float]) -> str:
    if not values:
        return "no samples"
    ms = [v * 1000 for v in values]
    return (
        f"n={len(ms)}  p50 {statistics.median(ms):7.1f} ms  p90 {percentile(ms, 0.9):7.1f} ms"
        f"  p99 {percentile(ms, 0.99):7.1f} ms  max {max(ms):7.1f} ms"
    )


def replies(url: str, moves: int, level: str, seed: str) -> tuple[list[float], list[float]]:
    """For each of the human's discards: from its answer (acknowledged) to the human's
    next ``turn`` event, and from sending it to that event (the human's whole wait)."""
    after_ack: list[float] = []
    whole: list[float] = []
    session = requests.Session()
    game_no = 0
    while len(whole) < moves:
        game_no += 1
        players = [{"name": "me"}, *({"name": f"b{i}", "bot": level} for i in range(3))]
        made = session.post(
            f"{url}/v1/games",
            json={"players": players, "seed": f"{seed}-{game_no}"},
            timeout=30,
        ).json()
        auth = {"Authorization": f"Bearer {made['players'][0]['token']}"}
        while len(whole) < moves:
            view = _my_turn(session, url, made["id"], auth)
            if view is None:
                break  # the game is over
            move = choose(view)
            sent = time.perf_counter()
            answer = session.post(
                f"{url}/v1/games/{made['id']}/moves", json=move, headers=auth, timeout=60
            )
            acknowledged = time.perf_counter()
            assert answer.status_code == 200, answer.text
            mine = answer.json()
            if move["type"] == "draw" or mine["status"] != "playing":
                continue
            if (mine["round"] or {}).get("turn") != 0:  # else the answer holds the replies
                after = answer.headers["ETag"].strip('"').split(".", 1)[1]
                if not _wait_for_turn(session, url, made["id"], auth, after):
                    continue
            replied = time.perf_counter()
            after_ack.append(replied - acknowledged)
            whole.append(replied - sent)
    return after_ack, whole


def _my_turn(
    session: requests.Session, url: str, game_id: str, auth: dict[str, str]
) -> dict[str, Any] | None:
    """The human's view on its turn (None once the game is over)."""
    for _poll in range(3000):
        view = session.get(f"{url}/v1/games/{game_id}/view", headers=auth, timeout=30).json()
        if view["status"] != "playing":
            return None
        if view["round"]["turn"] == 0:
            return dict(view)
        time.sleep(0.01)
    raise AssertionError("the human's turn never came")


def _wait_for_turn(
    session: requests.Session, url: str, game_id: str, auth: dict[str, str], after: str
) -> bool:
    """Long-poll until the human's next ``turn`` event; False when the game ended first."""
    while True:
        page = session.get(
            f"{url}/v1/games/{game_id}/events",
            params={"after": after, "wait": 30},
            headers=auth,
            timeout=60,
        ).json()
        for event in page["events"]:
            if event["type"] == "turn" and event["seat"] == 0:
                return True
            if event["type"] == "game_finished":
                return False
        if page["events"]:
            after = page["last_id"]


def timers(url: str, redis_url: str, games: int) -> list[float]:
    """Lateness of every automatic move of ``games`` games left alone."""
    client = redis.Redis.from_url(redis_url)
    pubsub = client.pubsub()
    made: list[str] = []
    for n in range(games):
        answer = requests.post(
            f"{url}/v1/games",
            json={
                "players": [{"name": "a"}, {"name": "b"}],
                "turn_timeout_seconds": 5,
                "autopilot_after_missed_turns": 3,
                "seed": f"timers-{n}",
            },
            timeout=30,
        ).json()
        made.append(answer["id"])
        pubsub.ssubscribe(wake_channel(answer["id"]))
        time.sleep(5 / games)  # spread the deadlines over a timer's length
    timer: dict[str, float] = {}
    for game_id in made:
        deadline = requests.get(f"{url}/v1/games/{game_id}", timeout=30).json()["timer"]
        timer[game_id] = deadline["deadline"]
    late: list[float] = []
    live = set(made)
    ends = time.monotonic() + 120
    while live and time.monotonic() < ends:
        message = pubsub.get_message(timeout=1)
        if message is None or message["type"] != "smessage":
            continue
        heard = time.time()
        game_id = message["channel"].decode()[5:].split("}")[0]
        wake = parse_wake_up(message["data"])
        events = [orjson.loads(raw) for seat, _tag, raw in wake.entries if not seat]
        if any(e.get("automatic") for e in events):
            late.append(heard - timer[game_id])
        if wake.deadline is not None and wake.deadline > heard + 1:
            timer[game_id] = wake.deadline
        if _all_autopilot(url, game_id):
            live.discard(game_id)  # its timers are over: bots play the rest
    pubsub.close()
    client.close()
    return late


def _all_autopilot(url: str, game_id: str) -> bool:
    public = requests.get(f"{url}/v1/games/{game_id}", timeout=30).json()
    return public["status"] != "playing" or all(p.get("bot") for p in public["players"])


def run(tree: Path, redis_server: RedisServer, args: argparse.Namespace, name: str) -> None:
    with GunicornServer(
        {"REDIS_URL": redis_server.url, **ENV}, tree=tree, access_log=False, name=name
    ) as server:
        worker = "a bot worker" if server.bot_worker is not None else "no bot worker"
        print(f"\n== {name}: {tree} ({worker})", flush=True)
        after_ack, whole = replies(server.url, args.moves, args.level, args.seed)
        print(f"{args.level} x3, answer to replies: {summary(after_ack)}", flush=True)
        print(f"{args.level} x3, move to replies:   {summary(whole)}", flush=True)
        if server.bot_worker is not None and args.timer_games:
            late = timers(server.url, redis_server.url, args.timer_games)
            print(f"turn timer lateness: {summary(late)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--moves", type=int, default=200, help="human discards timed")
    parser.add_argument("--level", default="strong", help="the three bots' level")
    parser.add_argument("--timer-games", type=int, default=20)
    parser.add_argument("--seed", default="bench-botplay")
    parser.add_argument("--baseline", type=Path, help="another checkout, run the same way")
    args = parser.parse_args()
    redis_server = RedisServer()
    redis_server.start()
    try:
        run(ROOT, redis_server, args, "this-tree")
        if args.baseline is not None:
            run(args.baseline, redis_server, args, "baseline")
    finally:
        redis_server.cleanup()


if __name__ == "__main__":
    main()
