"""A bounded soak: many clients playing many games on two instances, then proof nothing is lost.

    python bench/soak.py --duration 300          # `make soak`
    python bench/soak.py --duration 60 --clients 8

Starts its own ``redis-server`` (AOF on) and two gunicorn instances of the service
(``service.wsgi:app``, 2 workers each) on the same Redis, all stopped by PID at the
end.  Client threads create seeded games (some with an open seat joined later),
and play them through both instances at random, every change with an
``Idempotency-Key``: some requests are sent twice (one after the other, or at the
same time to both instances), and a failed request (connection error, 503, 409
``CONFLICT``) is retried with the same key.  Afterwards, for every game:

* the public event log, replayed through the engine from the seed
  (``State.new(Game(n, options), seed_from_client(seed))``), reproduces exactly
  the state stored in Redis and the totals, results and winners of the public view;
* the version is 1 + the number of changes acknowledged to the clients (a
  duplicated or retried change counted once): nothing acknowledged was lost and
  nothing was applied twice.

Zero 5xx answers are allowed.  Prints requests served and latency percentiles;
``--json`` writes the figures; ``tests/hardening/test_soak.py`` runs this script
for a short duration.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
import requests

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.gunicorn_server import GunicornServer  # noqa: E402
from harness.redis_server import RedisServer  # noqa: E402
from harness.replay_check import verify_game  # noqa: E402

RETRYABLE = {502, 503, 504}


# -- clients -----------------------------------------------------------------------


@dataclass
class Stats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    concurrent_duplicates: int = 0
    retries: int = 0
    replayed: int = 0
    mismatched_duplicates: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)

    def record(self, status: int, seconds: float, what: str) -> None:
        with self.lock:
            self.latencies.append(seconds)
            self.statuses[status] += 1
            if status >= 500:
                self.server_errors.append(f"{what}: {status}")


@dataclass
class PlayedGame:
    id: str
    seed: str
    tokens: dict[int, str]
    acknowledged: int = 1  # version 1 at creation; +1 per acknowledged change


class Player:
    """One client thread: creates games and plays them to the end or the deadline."""

    def __init__(self, index: int, bases: list[str], stats: Stats, deadline: float) -> None:
        self.rng = random.Random(index * 7919 + 17)
        self.index = index
        self.bases = bases
        self.stats = stats
        self.deadline = deadline
        self.session = requests.Session()
        self.games: list[PlayedGame] = []

    def base(self) -> str:
        return self.rng.choice(self.bases)

    def send(
        self,
        method: str,
        path: str,
        *,
        base: str | None = None,
        session: requests.Session | None = None,
        **kwargs: Any,
    ) -> requests.Response | None:
        started = time.perf_counter()
        try:
            r = (session or self.session).request(
                method, (base or self.base()) + path, timeout=30, **kwargs
            )
        except requests.RequestException as exc:
            with self.stats.lock:
                self.stats.errors[type(exc).__name__] += 1
            return None
        self.stats.record(r.status_code, time.perf_counter() - started, f"{method} {path}")
        return r

    def change(self, path: str, body: dict[str, Any], token: str | None = None) -> Any:
        """A change sent with an Idempotency-Key, maybe twice, retried until answered.

        Returns the (first) definitive answer's JSON and status.
        """
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        dup = self.rng.random()
        answers: list[requests.Response] = []
        if dup < 0.1:
            with self.stats.lock:
                self.stats.concurrent_duplicates += 1
            with ThreadPoolExecutor(2) as pool:
                futures = [
                    pool.submit(self._until_answered, path, body, headers, base, requests.Session())
                    for base in self.bases[:2]
                ]
                answers = [f.result() for f in futures]
        else:
            answers.append(self._until_answered(path, body, headers))
            if dup < 0.3:
                with self.stats.lock:
                    self.stats.duplicates += 1
                answers.append(self._until_answered(path, body, headers))
        first = answers[0]
        for other in answers[1:]:
            if (other.status_code, other.json()) != (first.status_code, first.json()):
                self.stats.mismatched_duplicates.append(path)
        with self.stats.lock:
            self.stats.replayed += sum(
                r.headers.get("Idempotent-Replayed") == "true" for r in answers
            )
        return first.status_code, first.json()

    def _until_answered(
        self,
        path: str,
        body: dict[str, Any],
        headers: dict[str, str],
        base: str | None = None,
        session: requests.Session | None = None,
    ) -> requests.Response:
        for attempt in range(200):
            r = self.send("POST", path, json=body, headers=headers, base=base, session=session)
            conflict = r is not None and r.status_code == 409 and "CONFLICT" == _code(r)
            if r is not None and r.status_code not in RETRYABLE and not conflict:
                return r
            if attempt:
                with self.stats.lock:
                    self.stats.retries += 1
            time.sleep(min(0.5, 0.02 * (attempt + 1)))
        raise RuntimeError(f"no answer to POST {path} after 200 attempts")

    def run(self) -> None:
        while time.monotonic() < self.deadline:
            self.play_one()

    def play_one(self) -> None:
        seats = self.rng.choice((2, 2, 3, 4))
        open_seat = self.rng.random() < 0.3
        players = [{"name": f"c{self.index}s{i}"} for i in range(seats - open_seat)]
        seed = f"soak-{self.index}-{uuid.uuid4().hex[:8]}"
        create: dict[str, Any] = {"players": players, "seats": seats, "seed": seed}
        if self.rng.random() < 0.5:  # short rounds, so that many games finish
            create["options"] = {"max_turns_per_round": self.rng.choice((2, 4, 8))}
        status, body = self.change("/v1/games", create)
        if status != 201:
            raise RuntimeError(f"create answered {status}: {body}")
        game = PlayedGame(body["id"], seed, {p["seat"]: p["token"] for p in body["players"]})
        self.games.append(game)
        if open_seat:
            status, body = self.change(f"/v1/games/{game.id}/players", {"name": "late"})
            if status != 201:
                raise RuntimeError(f"join answered {status}: {body}")
            game.acknowledged += 1
            game.tokens[body["seat"]] = body["token"]
        while time.monotonic() < self.deadline:
            r = self.send("GET", f"/v1/games/{game.id}")
            if r is None or r.status_code != 200:
                continue
            view = r.json()
            if view["status"] == "finished":
                return
            seat = view["round"]["turn"]
            token = game.tokens[seat]
            r = self.send(
                "GET", f"/v1/games/{game.id}/view", headers={"Authorization": f"Bearer {token}"}
            )
            if r is None or r.status_code != 200:
                continue
            mine = r.json()
            if not mine["legal_moves"]:
                continue
            move = self.choose(mine["legal_moves"])
            status, body = self.change(f"/v1/games/{game.id}/moves", move, token)
            if status == 200:
                game.acknowledged += 1
            elif status not in (409, 412):
                raise RuntimeError(f"move {move} answered {status}: {body}")

    def choose(self, legal: list[dict[str, Any]]) -> dict[str, Any]:
        going_out = [m for m in legal if m["type"] == "go_out"]
        if going_out and self.rng.random() < 0.8:
            move = dict(self.rng.choice(going_out))
            if self.rng.random() < 0.5:
                move.pop("melds", None)  # let the service find the melds
            return move
        draws = [m for m in legal if m["type"] == "draw"]
        if draws:
            return self.rng.choice(draws)
        return self.rng.choice([m for m in legal if m["type"] == "discard"])


def _code(r: requests.Response) -> str:
    try:
        return str(r.json().get("code", ""))
    except ValueError:
        return ""


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def pct(p: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))], 2)

    return {"p50_ms": pct(50), "p90_ms": pct(90), "p99_ms": pct(99), "max_ms": pct(100)}


@contextmanager
def cluster(work: Path, instances: int = 2, workers: int = 2) -> Iterator[tuple[str, list[str]]]:
    """A private Redis (AOF) and ``instances`` gunicorn instances on it; all stopped by PID."""
    server = RedisServer(extra_args=("--appendonly", "yes", "--appendfsync", "everysec"))
    procs: list[GunicornServer] = []
    try:
        server.start()
        for i in range(instances):
            env = {"REDIS_URL": server.url, "WEB_CONCURRENCY": str(workers), "LOG_LEVEL": "WARNING"}
            procs.append(GunicornServer(env, access_log=False, log_dir=work, name=f"gunicorn-{i}"))
            procs[-1].start()
        yield server.url, [proc.url for proc in procs]
    finally:
        for proc in procs:
            proc.stop()
        server.cleanup()


def run(duration: float = 60.0, clients: int = 12, work: Path | None = None) -> dict[str, Any]:
    """Run the soak for ``duration`` seconds; returns its figures (see the module docstring)."""
    work = work or Path(os.environ.get("TMPDIR", "/tmp")) / f"t13-soak-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    stats = Stats()
    started = time.monotonic()
    with cluster(work) as (redis_url, bases):
        deadline = time.monotonic() + duration
        players = [Player(i, bases, stats, deadline) for i in range(clients)]
        failures: list[str] = []

        def play(player: Player) -> None:
            try:
                player.run()
            except Exception as exc:
                failures.append(f"client {player.index}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=play, args=(p,)) for p in players]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        played = time.monotonic() - started
        client = redis.Redis.from_url(redis_url, socket_timeout=10)
        session = requests.Session()
        problems: list[str] = list(failures)
        finished = moves = 0
        games = [g for p in players for g in p.games]
        for game in games:
            found, view = verify_game(client, session, bases[0], game.id, game.seed)
            problems += found
            if view and view["version"] != game.acknowledged:
                problems.append(
                    f"{game.id}: version {view['version']} but {game.acknowledged} acknowledged"
                )
            finished += bool(view) and view.get("status") == "finished"
            moves += game.acknowledged - 1
        client.close()
    served = sum(stats.statuses.values())
    return {
        "duration_s": round(played, 1),
        "clients": clients,
        "instances": len(bases),
        "games": len(games),
        "games_finished": finished,
        "changes_acknowledged": moves,
        "requests": served,
        "requests_per_s": round(served / played, 1) if played else 0,
        "statuses": dict(sorted(stats.statuses.items())),
        "client_errors": dict(stats.errors),
        "duplicates": stats.duplicates,
        "concurrent_duplicates": stats.concurrent_duplicates,
        "replayed_answers": stats.replayed,
        "retries": stats.retries,
        "latency": _percentiles(stats.latencies),
        "server_errors": stats.server_errors[:20],
        "mismatched_duplicates": stats.mismatched_duplicates[:20],
        "problems": problems[:50],
        "ok": not problems and not stats.server_errors and not stats.mismatched_duplicates,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of play")
    parser.add_argument("--clients", type=int, default=12, help="client threads")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--work", type=Path, help="directory for the servers' logs")
    args = parser.parse_args(argv)
    result = run(args.duration, args.clients, args.work)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
