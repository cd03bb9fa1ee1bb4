"""The bot worker (``three-thirteen-bots``): turns that fall due -- bots', turn
timers' -- are played by it, never by a request, on time, and handed over when a
worker dies.  Real gunicorn, real redis-server, real worker processes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
import requests

from harness.gunicorn_server import GunicornServer
from harness.live_game import choose
from harness.ports import free_port
from harness.webhook_worker import WorkerProcess
from service.hosting.replays import verify_replay
from service.store.keys import DUE, outbox_key, slot_of, wake_channel
from service.store.wakeups import parse_wake_up

MOVES = ("drew", "discarded", "went_out")


def create(url: str, players: list[dict[str, Any]], **body: Any) -> dict[str, Any]:
    answer = requests.post(f"{url}/v1/games", json={"players": players, **body}, timeout=30)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def public(url: str, game_id: str) -> dict[str, Any]:
    answer = requests.get(f"{url}/v1/games/{game_id}", timeout=30)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def wait_until(found: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        answer = found()
        if answer:
            return answer
        assert time.monotonic() < deadline, f"{what}: not after {timeout} s"
        time.sleep(0.05)


class Writes:
    """Every write of one game, as its wake-up channel publishes them: when it was
    heard, the turn deadline it left, its events."""

    def __init__(self, client: redis.Redis, game_id: str) -> None:
        self._pubsub = client.pubsub()
        self._pubsub.ssubscribe(wake_channel(game_id))
        first = self._pubsub.get_message(timeout=5)
        assert first is not None and first["type"] == "ssubscribe"
        self.heard: list[tuple[float, float | None, list[dict[str, Any]]]] = []

    def drain(self, seconds: float = 0.2) -> None:
        while (message := self._pubsub.get_message(timeout=seconds)) is not None:
            if message["type"] == "smessage":
                wake = parse_wake_up(message["data"])
                events = [orjson.loads(raw) for _seat, _tag, raw in wake.entries]
                self.heard.append((time.time(), wake.deadline, events))

    def close(self) -> None:
        self._pubsub.close()


@pytest.fixture
def server(
    redis_client: redis.Redis, redis_url: str, gunicorn: Callable[[Mapping[str, str]], Any]
) -> GunicornServer:
    """gunicorn on the test Redis, with a bot worker beside it (the harness's)."""
    started: GunicornServer = gunicorn({"REDIS_URL": redis_url, "LOG_LEVEL": "INFO"})
    assert started.bot_worker is not None and started.bot_worker.running()
    return started


def test_a_game_left_alone_finishes_on_its_timers_each_fired_within_a_second(
    server: GunicornServer, redis_client: redis.Redis
) -> None:
    """Two players who never call again: every turn timer fires on its own (the
    automatic move, then the autopilot hand-over), within a second of its deadline,
    and the bots finish the game."""
    made = create(
        server.url,
        [{"name": "ann"}, {"name": "bob"}],
        turn_timeout_seconds=5,
        autopilot_after_missed_turns=2,
        options={"max_turns_per_round": 40},
    )
    game_id = made["id"]
    writes = Writes(redis_client, game_id)
    deadline = public(server.url, game_id)["timer"]["deadline"]
    assert deadline is not None
    timers = [deadline]  # each turn timer, as the write before it left it
    late: list[float] = []
    finished = False
    ends = time.monotonic() + 240
    while not finished:
        assert time.monotonic() < ends, "the game did not finish on its timers"
        writes.drain()
        for heard, left, events in writes.heard:
            automatic = any(e.get("automatic") for e in events)
            if automatic:
                late.append(heard - timers[-1])
            if left is not None and left > heard + 1:  # a human's clock runs: a timer
                timers.append(left)
            finished = finished or any(e["type"] == "game_finished" for e in events)
        writes.heard.clear()
    writes.close()
    assert len(late) == 4, late  # two missed turns each, then the seats are the bots'
    assert all(-0.05 <= lateness <= 1.0 for lateness in late), late
    assert public(server.url, game_id)["players"][0]["autopilot"] is True


def test_a_killed_worker_s_claims_are_taken_over_and_the_replay_verifies(
    redis_client: redis.Redis, redis_url: str, gunicorn: Callable[..., Any], tmp_path: Path
) -> None:
    """SIGKILL a worker while it holds its claim on a game; another worker takes
    the game over once the claim's lease ends, and finishes it; its replay verifies.
    That worker's metrics (``WORKER_METRICS_PORT``) count what it did."""
    served: GunicornServer = gunicorn({"REDIS_URL": redis_url})
    served.stop_bot_worker()  # this test runs its own
    env = {"LOG_LEVEL": "INFO", "BOT_CLAIM_SECONDS": "3", "BOT_IDLE_MOVE_SECONDS": "0"}
    players = [{"name": "me"}, *({"name": f"b{i}", "bot": "basic"} for i in range(7))]
    made = create(served.url, players, seed="kill-1", ruleset="party")
    game_id = made["id"]
    handed = requests.post(
        f"{served.url}/v1/games/{game_id}/autopilot",
        json={"level": "basic"},
        headers={"Authorization": f"Bearer {made['players'][0]['token']}"},
        timeout=30,
    )
    assert handed.status_code == 200, handed.text
    due = outbox_key(slot_of(game_id), DUE)

    def start(name: str, **more: str) -> WorkerProcess:
        settings = {**env, **more}
        worker = WorkerProcess(redis_url, settings, tmp_path / name, module="service.botplay")
        workers.append(worker)
        return worker

    workers: list[WorkerProcess] = []
    try:
        claimed_until = None
        for attempt in range(20):
            worker = start(f"bots-{attempt}.log")
            version = public(served.url, game_id)["version"]
            wait_until(
                lambda v=version: public(served.url, game_id)["version"] > v,
                60,
                "the worker plays",
            )
            worker.kill()
            score = redis_client.zscore(due, game_id)
            if score is not None and score / 1000 > time.time() + 0.1:
                claimed_until = score / 1000  # killed holding its claim
                break
        assert claimed_until is not None, "never killed while holding a claim"
        assert public(served.url, game_id)["status"] == "playing"
        version = public(served.url, game_id)["version"]
        port = free_port()
        start("bots-next.log", WORKER_METRICS_PORT=str(port))
        wait_until(lambda: public(served.url, game_id)["version"] > version, 60, "taken over")
        taken_over = time.time()
        assert claimed_until - 0.05 <= taken_over <= claimed_until + 10
        wait_until(
            lambda: public(served.url, game_id)["status"] == "finished", 240, "the game ends"
        )
        metrics = worker_metrics(port)
    finally:
        for worker in workers:
            worker.kill()
    replay = requests.get(f"{served.url}/v1/games/{game_id}/replay", timeout=30)
    assert replay.status_code == 200
    assert verify_replay(replay.json()) == []
    assert redis_client.zscore(due, game_id) is None  # nothing left due
    moves = replay.json()["actions"]
    assert metrics["t13_bot_games_finished_total"] == 1
    # the rest of the game: the killed workers played its first moves
    assert 0 < metrics["t13_bot_moves_total"] < len(moves)
    assert metrics['t13_bot_claims_total{outcome="written"}'] >= 1
    assert (
        metrics["t13_bot_due_lateness_seconds_count"]
        >= metrics['t13_bot_claims_total{outcome="written"}']
    )


def worker_metrics(port: int) -> dict[str, float]:
    """A bot worker's metrics, as Prometheus reads them: each sample's value by its
    name and labels."""
    text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
    found: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            found[name] = float(value)
    return found


def test_readers_of_a_game_of_bots_play_nothing_and_it_finishes_once(
    redis_client: redis.Redis, redis_url: str, gunicorn: Callable[..., Any], tmp_path: Path
) -> None:
    """16 anonymous readers of a game whose seats are all bots' play nothing: the
    game stays at its version however often they read, each read costs what a read
    of a human's game costs (within 2x, in the server's CPU), and once a worker runs
    the game finishes -- once."""
    served: GunicornServer = gunicorn({"REDIS_URL": redis_url})
    served.stop_bot_worker()  # no worker at first: whatever moves, a request moved
    bots = create(served.url, [{"name": "me"}, {"name": "b", "bot": "strong"}], seed="readers")
    handed = requests.post(
        f"{served.url}/v1/games/{bots['id']}/autopilot",
        json={"level": "strong"},
        headers={"Authorization": f"Bearer {bots['players'][0]['token']}"},
        timeout=30,
    )
    assert handed.status_code == 200
    humans = create(served.url, [{"name": "a"}, {"name": "b"}], seed="readers-2")
    before = public(served.url, bots["id"])["version"]

    def read_cpu(game_id: str) -> float:
        start = served.cpu_seconds()
        failures: list[int] = []

        def reader() -> None:
            with requests.Session() as session:
                for _read in range(25):
                    answer = session.get(f"{served.url}/v1/games/{game_id}", timeout=30)
                    if answer.status_code != 200:
                        failures.append(answer.status_code)

        threads = [threading.Thread(target=reader) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures
        return served.cpu_seconds() - start

    plain = min(read_cpu(humans["id"]) for _ in range(2))
    of_bots = min(read_cpu(bots["id"]) for _ in range(2))
    assert public(served.url, bots["id"])["version"] == before  # no read played a move
    assert of_bots <= 2 * plain + 0.05, (of_bots, plain)
    served.start_bot_worker()
    wait_until(
        lambda: public(served.url, bots["id"])["status"] == "finished", 240, "the bots finish"
    )
    seen: list[dict[str, Any]] = []
    after = "0"
    while True:
        page = requests.get(
            f"{served.url}/v1/games/{bots['id']}/events", params={"after": after}, timeout=30
        ).json()
        if not page["events"]:
            break
        seen += page["events"]
        after = page["last_id"]
    assert sum(e["type"] == "game_finished" for e in seen) == 1


def test_a_human_move_with_three_bots_gets_the_replies_through_the_events(
    server: GunicornServer,
) -> None:
    """The move's answer holds the human's move alone; the bots' replies, and the
    human's next turn, come through a long poll of the events."""
    players = [{"name": "me"}, *({"name": f"b{i}", "bot": "basic"} for i in range(3))]
    made = create(server.url, players, seed="replies")
    game_id, token = made["id"], made["players"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    after = "0"
    replied = 0
    while replied < 5:
        view = wait_until(
            lambda: (
                (v := requests.get(f"{server.url}/v1/games/{game_id}/view", headers=auth).json())
                and (v["status"] != "playing" or v["round"]["turn"] == 0)
                and v
            ),
            60,
            "the human's turn",
        )
        if view["status"] != "playing":
            break
        move = next(m for m in view["legal_moves"] if m["type"] in ("draw", "discard"))
        if move["type"] == "draw":
            move = {"type": "draw", "source": "stock"}
        answer = requests.post(
            f"{server.url}/v1/games/{game_id}/moves", json=move, headers=auth, timeout=30
        )
        assert answer.status_code == 200, answer.text
        mine = answer.json()
        if move["type"] == "draw" or (mine["round"] or {}).get("turn") == 0:
            continue  # no reply to wait for
        after = answer.headers["ETag"].strip('"').split(".", 1)[1]
        bot_moves: list[dict[str, Any]] = []
        while True:  # long polls until the human's turn comes back
            page = requests.get(
                f"{server.url}/v1/games/{game_id}/events",
                params={"after": after, "wait": 30},
                headers=auth,
                timeout=60,
            )
            assert page.status_code == 200, page.text
            events = page.json()["events"]
            assert events, "the bots did not reply within 30 s"
            after = events[-1]["id"]
            bot_moves += [e for e in events if e["type"] in MOVES and e.get("bot")]
            if any(e["type"] == "turn" and e["seat"] == 0 for e in events) or any(
                e["type"] in ("round_ended", "game_finished") for e in events
            ):
                break
        assert {e["seat"] for e in bot_moves} <= {1, 2, 3}
        assert bot_moves, "the bots replied"
        replied += 1
    assert replied >= 1


def test_sigterm_stops_a_worker_cleanly(
    redis_client: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """SIGTERM: the worker claims no more, finishes what it plays, and exits 0.  It
    plays with the bots' settings of its environment (as the server would)."""
    log = tmp_path / "bots.log"
    settings = {
        "LOG_LEVEL": "INFO",
        "BOT_EXPERT_SAMPLES": "5",
        "SOLVER": "python",
        "BOT_CACHE_MB": "48",
    }
    worker = WorkerProcess(redis_url, settings, log, module="service.botplay")
    wait_until(lambda: "bot worker started" in log.read_text(), 30, "the worker starts")
    assert "bot worker started (solver PYTHON, expert samples 5, memos 48 MB)" in log.read_text()
    worker.stop()
    assert worker.process.returncode == 0
    assert "bot worker stopping (signal 15)" in log.read_text()


def test_a_human_and_three_expert_bots_finish_a_game_through_the_api(
    redis_client: redis.Redis, redis_url: str, gunicorn: Callable[..., Any]
) -> None:
    """The human plays over HTTP and waits for its turns; the worker plays the three
    `expert` seats (4 samples a decision, to keep the test short); the game ends."""
    served: GunicornServer = gunicorn({"REDIS_URL": redis_url, "BOT_EXPERT_SAMPLES": "4"})
    players = [{"name": "me"}, *({"name": f"e{i}", "bot": "expert"} for i in range(3))]
    made = create(served.url, players, seed="experts", options={"max_turns_per_round": 12})
    game_id, auth = made["id"], {"Authorization": f"Bearer {made['players'][0]['token']}"}
    ends = time.monotonic() + 600
    while True:
        assert time.monotonic() < ends, "the game did not finish"
        view = wait_until(
            lambda: (
                (v := requests.get(f"{served.url}/v1/games/{game_id}/view", headers=auth).json())
                and (v["status"] != "playing" or v["round"]["turn"] == 0)
                and v
            ),
            120,
            "the human's turn",
        )
        if view["status"] != "playing":
            break
        move = choose(view)
        answer = requests.post(
            f"{served.url}/v1/games/{game_id}/moves", json=move, headers=auth, timeout=30
        )
        assert answer.status_code == 200, answer.text
    assert view["status"] == "finished" and len(view["results"]) == 11
    replay = requests.get(f"{served.url}/v1/games/{game_id}/replay", timeout=30)
    assert verify_replay(replay.json()) == []
