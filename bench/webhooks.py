"""Webhook delivery: latency from a move's commit to its receipt, and one worker's throughput.

    python bench/webhooks.py                  # `make bench-webhooks` (about 1 minute)
    python bench/webhooks.py --rate 100 --seconds 30 --backlog 5000

Starts its own ``redis-server``, one gunicorn instance of the service (1 worker), one
delivery worker process (``python -m service.webhooks``, the shipped settings but
http and loopback allowed) and a receiver on 127.0.0.1 in this process, all stopped
by PID at the end.

* **Latency.** Two-player games with a webhook (every event) are played over HTTP at
  ``--rate`` moves/s for ``--seconds``; each delivery's latency is its receipt
  (the receiver reading its body) minus its body's ``timestamp`` (taken by the server
  just before the commit script runs).  p50, p90, p99 and max.
* **Throughput.** With the worker stopped, moves queue ``--backlog`` deliveries; a
  fresh worker is started and the deliveries per second from its first receipt to its
  last are one worker's throughput (a new connection per delivery, signed, settled).

Each delivery is checked: every queued one arrives (by id), with a valid signature.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis
import requests

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from standardwebhooks.webhooks import Webhook  # noqa: E402

from harness.gunicorn_server import GunicornServer  # noqa: E402
from harness.live_game import LiveGame  # noqa: E402
from harness.redis_server import RedisServer  # noqa: E402
from harness.webhook_receiver import Received, WebhookReceiver  # noqa: E402
from harness.webhook_worker import WorkerProcess  # noqa: E402
from service.store import keys  # noqa: E402

ENV = {"WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_ALLOW_LOOPBACK": "true", "LOG_LEVEL": "INFO"}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Games:
    """Two-player games with a webhook, played one move at a time, round robin."""

    def __init__(self, base: str, url: str, count: int) -> None:
        self.session = requests.Session()
        self.secrets: dict[str, str] = {}
        self.games: list[LiveGame] = []
        self.base, self.url = base, url
        for _ in range(count):
            self.games.append(self._new())
        self._turn = itertools.cycle(range(count))

    def _new(self) -> LiveGame:
        answer = self.session.post(
            f"{self.base}/v1/games",
            json={"players": [{"name": "ann"}, {"name": "bob"}], "webhook": {"url": self.url}},
            timeout=10,
        )
        assert answer.status_code == 201, answer.text
        created = answer.json()
        self.secrets[created["id"]] = created["webhook"]["secret"]
        tokens = {p["seat"]: p["token"] for p in created["players"]}
        return LiveGame(self.base, created["id"], tokens, self.session)

    def move(self) -> None:
        index = next(self._turn)
        if not self.games[index].step():
            self.games[index] = self._new()


def check(games: Games, received: list[Received]) -> set[str]:
    """The delivery ids of ``received``, each signature checked (by the Standard
    Webhooks library, at the attempt's own timestamp: the check runs later)."""
    ids = set()
    for got in received:
        body = got.json()
        signer = Webhook(games.secrets[body["game_id"]])
        stamp = datetime.fromtimestamp(int(got.headers["webhook-timestamp"]), UTC)
        assert signer.sign(body["id"], stamp, got.body.decode()) == got.headers["webhook-signature"]
        ids.add(body["id"])
    return ids


def queued(client: redis.Redis, games: Games) -> int:
    """Deliveries waiting in the outboxes of the games' slots."""
    streams = {keys.outbox_key(keys.slot_of(game), keys.OUTBOX) for game in games.secrets}
    pipe = client.pipeline(transaction=False)
    for stream in streams:
        pipe.xlen(stream)
    return sum(pipe.execute())


def latency(games: Games, receiver: WebhookReceiver, rate: float, seconds: float) -> dict[str, Any]:
    # the creations' deliveries (two seats joined, the start, the first turn) first:
    # the worker was starting up meanwhile
    assert receiver.wait_for(lambda got: len(got) >= 4 * len(games.games), timeout=60)
    start = len(receiver.received)
    began = time.monotonic()
    moves = 0
    while time.monotonic() - began < seconds:
        games.move()
        moves += 1
        pause = began + moves / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    time.sleep(2)
    got = receiver.delivered()[start:]
    check(games, got)
    lags = [(r.at - datetime.fromisoformat(r.json()["timestamp"]).timestamp()) * 1000 for r in got]
    return {
        "moves": moves,
        "moves_per_second": round(moves / seconds, 1),
        "deliveries": len(got),
        "p50_ms": round(percentile(lags, 0.50), 1),
        "p90_ms": round(percentile(lags, 0.90), 1),
        "p99_ms": round(percentile(lags, 0.99), 1),
        "max_ms": round(max(lags), 1),
    }


def throughput(
    games: Games, receiver: WebhookReceiver, redis_url: str, backlog: int, logs: Path
) -> dict[str, Any]:
    start = len(receiver.received)
    client = redis.Redis.from_url(redis_url)
    queued_since = time.monotonic()
    waiting = 0
    while waiting < backlog:
        for _ in range(50):
            games.move()
        waiting = queued(client, games)
    queue_seconds = time.monotonic() - queued_since
    worker = WorkerProcess(redis_url, ENV, logs / "worker-2.log")
    try:
        assert receiver.wait_for(lambda got: len(got) - start >= waiting, timeout=300)
        time.sleep(1)
    finally:
        worker.stop()
        client.close()
    got = receiver.delivered()[start:]
    ids = check(games, got)
    span = got[-1].at - got[0].at
    return {
        "queued": len(got),
        "distinct_ids": len(ids),
        "queue_seconds": round(queue_seconds, 1),
        "drain_seconds": round(span, 2),
        "deliveries_per_second": round((len(got) - 1) / span, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--rate", type=float, default=50, help="moves/s in the latency phase")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--backlog", type=int, default=2000)
    args = parser.parse_args(argv)
    redis_server = RedisServer().start()
    try:
        with tempfile.TemporaryDirectory() as tmp, WebhookReceiver() as receiver:
            logs = Path(tmp)
            with GunicornServer({"REDIS_URL": redis_server.url, **ENV}) as server:
                worker = WorkerProcess(redis_server.url, ENV, logs / "worker-1.log")
                try:
                    time.sleep(1)
                    games = Games(server.url, receiver.url, args.games)
                    first = latency(games, receiver, args.rate, args.seconds)
                finally:
                    worker.stop()
                second = throughput(games, receiver, redis_server.url, args.backlog, logs)
    finally:
        redis_server.cleanup()
    print(f"latency at {first['moves_per_second']} moves/s over {args.games} games:")
    print("| deliveries | p50 | p90 | p99 | max |\n|---|---|---|---|---|")
    print(
        f"| {first['deliveries']} | {first['p50_ms']} ms | {first['p90_ms']} ms "
        f"| {first['p99_ms']} ms | {first['max_ms']} ms |"
    )
    print("one worker draining a backlog:")
    print("| deliveries | distinct ids | seconds | deliveries/s |\n|---|---|---|---|")
    print(
        f"| {second['queued']} | {second['distinct_ids']} | {second['drain_seconds']} "
        f"| {second['deliveries_per_second']} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
