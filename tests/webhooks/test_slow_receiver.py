"""Slow receivers (issue 39, item 3): a real loopback receiver that answers one byte
at a time, each long before a read would time out.  An attempt ends at its total
deadline; a slow receiver takes at most its cap of a worker's threads, so another
game's delivery goes out at once; SIGTERM stops a worker within a bound while an
attempt trickles; and two workers never have one delivery in flight at once."""

from __future__ import annotations

import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from harness.webhook_receiver import Visit, WebhookReceiver
from harness.webhook_worker import WorkerProcess
from service.store import keys
from service.store.outbox import Outbox
from service.webhooks.sender import Sender
from service.webhooks.worker import FIRST_RETRY_SECONDS, DeliveryWorker
from tests.webhooks.conftest import HOOK_ENV
from tests.webhooks.test_delivery import auth, create

TRICKLE = 0.2
"""Seconds between the slow receiver's bytes: far below any read timeout here."""


@pytest.fixture
def slow() -> Iterator[WebhookReceiver]:
    """A receiver that trickles its answer for a minute, one byte every 0.2 s."""
    with WebhookReceiver() as running:
        running.trickle = TRICKLE
        running.trickle_for = 60
        yield running


def most_at_once(visits: list[Visit]) -> int:
    """The most of ``visits`` in flight at one moment."""
    edges = sorted(
        [(v.start, 1) for v in visits] + [(v.end, -1) for v in visits if v.end is not None]
    )
    most = now = 0
    for _at, step in edges:
        now += step
        most = max(most, now)
    return most


def test_a_trickling_answer_ends_at_the_total_deadline(slow: WebhookReceiver):
    sender = Sender(timeout=1.5, allow_http=True, allow_loopback=True)
    started = time.monotonic()
    outcome = sender.post(slow.url, b"{}", {"webhook-id": "msg_slow"})
    took = time.monotonic() - started
    print(f"\ntrickling receiver: attempt ended after {took:.2f} s (deadline 1.5 s)")
    assert outcome.status is None and not outcome.delivered
    assert outcome.error is not None and outcome.error.startswith("timed out"), outcome.error
    assert 1.4 <= took < 1.5 + 3.5  # per read, it would have gone on for 60 s
    # the receiver saw the connection closed: nothing of it lingers
    assert slow.wait_until(lambda: all(v.end is not None for v in slow.visits), timeout=10)


def test_a_bystander_is_delivered_while_a_slow_receiver_holds_its_cap(
    hook_client: FlaskClient,
    slow: WebhookReceiver,
    receiver: WebhookReceiver,
    start_worker: Callable[..., DeliveryWorker],
):
    """Six games of a slow receiver, a worker of 4 threads and a cap of 2 a receiver:
    the slow one never has more than 2 attempts at once, and a bystander's delivery
    arrives well within one attempt's deadline."""
    start_worker(
        WEBHOOK_CONCURRENCY="4",
        WEBHOOK_HOST_CONCURRENCY="2",
        WEBHOOK_TIMEOUT_SECONDS="3",
        WEBHOOK_CLAIM_SECONDS="6",
    )
    slow_games = [create(hook_client, slow.url, events=["seat_joined"]) for _ in range(6)]
    assert slow.wait_until(lambda: len(slow.visits) >= 2, timeout=30)
    slow_slots = {keys.slot_of(g["id"]) for g in slow_games}
    latencies = []
    for _ in range(3):
        started = time.monotonic()
        bystander = create(hook_client, receiver.url, events=["seat_joined"])
        if keys.slot_of(bystander["id"]) in slow_slots:
            continue  # read with the slow games' batch: not what this test is about
        assert receiver.wait_until(
            lambda b=bystander: any(r.json()["game_id"] == b["id"] for r in receiver.received),
            timeout=60,
        )
        latencies.append(time.monotonic() - started)
    print(f"\nbystander latency with a slow receiver at its cap: {max(latencies):.3f} s")
    assert latencies and max(latencies) < 3.0  # 3 s: one slow attempt's whole deadline
    assert most_at_once(slow.visits_now()) <= 2


@pytest.fixture
def worker_process(redis_url: str) -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []
    with tempfile.TemporaryDirectory() as logs:

        def start(**overrides: str) -> WorkerProcess:
            env = {**HOOK_ENV, "LOG_LEVEL": "INFO", **overrides}
            worker = WorkerProcess(redis_url, env, Path(logs) / "worker.log")
            started.append(worker)
            return worker

        yield start
        for worker in started:
            worker.kill()


def test_sigterm_stops_the_worker_within_a_bound_while_an_attempt_trickles(
    hook_client: FlaskClient,
    slow: WebhookReceiver,
    worker_process: Callable[..., WorkerProcess],
):
    worker = worker_process(WEBHOOK_TIMEOUT_SECONDS="3", WEBHOOK_CLAIM_SECONDS="6")
    create(hook_client, slow.url, events=["game_started"])
    assert slow.wait_until(lambda: len(slow.visits) >= 1, timeout=30)
    started = time.monotonic()
    worker.process.send_signal(signal.SIGTERM)
    assert [v for v in slow.visits_now() if v.end is None]  # it lands mid-attempt
    try:
        code = worker.process.wait(3 + 12)  # the attempt's deadline, and room to spare
    except subprocess.TimeoutExpired:
        pytest.fail("the worker was still running 15 s after SIGTERM")
    took = time.monotonic() - started
    print(f"\nSIGTERM to exit with an attempt trickling: {took:.2f} s (deadline 3 s)")
    assert code == 0


def test_two_workers_never_have_one_delivery_in_flight_at_once(
    hook_client: FlaskClient,
    slow: WebhookReceiver,
    start_worker: Callable[..., DeliveryWorker],
):
    """Attempts trickle until their deadline (2 s) again and again; the claim (8 s)
    and the sweeps (0.5 s) of two workers leave every chance of a takeover.  No two
    attempts of the delivery ever overlap."""
    settings = {"WEBHOOK_TIMEOUT_SECONDS": "2", "WEBHOOK_CLAIM_SECONDS": "8"}
    start_worker(**settings)
    start_worker(**settings)
    create(hook_client, slow.url, events=["game_started"])
    # four attempts, or long past the claim (slower: attempts that do not end)
    slow.wait_until(lambda: sum(v.end is not None for v in slow.visits) >= 4, timeout=45)
    visits = slow.visits_now()
    assert len({v.msg_id for v in visits}) == 1 and len(visits) >= 2, visits
    assert most_at_once(visits) == 1, visits


def test_an_attempt_cut_off_at_its_deadline_is_followed_by_a_pause(
    hook_client: FlaskClient,
    slow: WebhookReceiver,
    start_worker: Callable[..., DeliveryWorker],
):
    """The backoff counts from the end of the failed attempt, not from its start: an
    attempt that took its whole deadline (2 s, longer than the first delays) is not
    followed at once by the next.  Read from the delivery log, not from a clock."""
    start_worker(WEBHOOK_TIMEOUT_SECONDS="2", WEBHOOK_CLAIM_SECONDS="8")
    created = create(hook_client, slow.url, events=["game_started"])
    log_url = f"/v1/games/{created['id']}/webhook"
    token = created["webhook"]["token"]

    def attempts() -> list[dict[str, Any]]:
        return list(hook_client.get(log_url, headers=auth(token)).get_json()["attempts"])

    deadline = time.monotonic() + 45
    while time.monotonic() < deadline and len(attempts()) < 2:
        time.sleep(0.2)
    lines = attempts()
    assert len(lines) >= 2, lines
    for line in lines:
        assert line["outcome"] == "retrying" and str(line["error"]).startswith("timed out")
        ended = line["at"] + line["duration_ms"] / 1000
        pause = line["next_attempt_at"] - ended
        assert pause >= FIRST_RETRY_SECONDS / 2 - 0.01, line


def test_a_claim_is_renewed_only_by_the_worker_that_holds_it(
    hook_client: FlaskClient, redis_client: redis.Redis, receiver: WebhookReceiver
):
    """The check before every attempt: a delivery taken over by another worker (here
    while the first still held it) is not this worker's to send any more."""
    game = create(hook_client, receiver.url, events=["game_started"])
    slot = keys.slot_of(game["id"])
    outbox = Outbox(redis_client, log_ttl_seconds=60)
    (delivery,) = outbox.take(slot, "worker-a", 10)
    time.sleep(1.0)  # idle for a second: the renewal starts it again
    assert outbox.renew(delivery, "worker-a")
    stream = keys.outbox_key(slot, keys.OUTBOX)
    (pending,) = redis_client.xpending_range(stream, keys.OUTBOX_GROUP, "-", "+", 1)
    assert pending["consumer"] == b"worker-a" and pending["time_since_delivered"] < 1000
    (taken,) = outbox.reclaim(slot, "worker-b", 0, 10)
    assert taken.entry_id == delivery.entry_id
    assert not outbox.renew(delivery, "worker-a")  # worker-a must not send it now
    assert outbox.renew(taken, "worker-b")
    (pending,) = redis_client.xpending_range(stream, keys.OUTBOX_GROUP, "-", "+", 1)
    assert pending["consumer"] == b"worker-b"
    assert outbox.settle(taken, {"outcome": "delivered"}, None)
    assert not outbox.renew(taken, "worker-b")  # settled: nothing to send
