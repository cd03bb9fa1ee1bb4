"""At least once through crashes: the delivery worker (``three-thirteen-webhooks``, a
process of its own) killed with SIGKILL in the middle of deliveries; after a new one
starts, every queued delivery is made -- perhaps twice, under the same id -- and none
is lost."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from flask.testing import FlaskClient

from harness.webhook_receiver import WebhookReceiver
from harness.webhook_worker import WorkerProcess
from service.store import keys
from tests.webhooks.conftest import HOOK_ENV
from tests.webhooks.test_delivery import create, expected_turns, play, verified


@pytest.fixture
def workers(redis_url: str) -> Iterator[list[WorkerProcess]]:
    started: list[WorkerProcess] = []
    with tempfile.TemporaryDirectory() as logs:

        def start() -> WorkerProcess:
            env = {**HOOK_ENV, "LOG_LEVEL": "INFO"}
            worker = WorkerProcess(redis_url, env, Path(logs) / "worker.log")
            started.append(worker)
            return worker

        yield start
        for worker in started:
            worker.kill()


def pending(client: redis.Redis, game_ids: list[str]) -> int:
    """Deliveries taken by a worker and not acknowledged, in these games' outboxes (an
    emptied outbox is deleted)."""
    streams = {keys.outbox_key(keys.slot_of(g), keys.OUTBOX) for g in game_ids}
    return sum(_pending_in(client, s) for s in streams)


def _pending_in(client: redis.Redis, stream: str) -> int:
    """One outbox's unacknowledged deliveries; none once it is deleted (the worker may
    delete it between any two reads of ours, so absence is read from NOGROUP itself)."""
    try:
        return int(client.xpending(stream, keys.OUTBOX_GROUP)["pending"])
    except redis.ResponseError as exc:
        if str(exc).startswith("NOGROUP"):
            return 0
        raise


def test_sigkill_mid_delivery_loses_nothing(
    hook_client: FlaskClient,
    redis_client: redis.Redis,
    receiver: WebhookReceiver,
    workers,  # noqa: ANN001
):
    receiver.delay = 0.3  # each delivery takes a while: the kill lands in the middle
    first = workers()
    games = [create(hook_client, receiver.url, events=["turn"]) for _ in range(4)]
    for created in games:
        play(hook_client, created, moves=12)
    assert receiver.wait_for(lambda got: len(got) >= 3, timeout=30)
    first.kill()
    ids = [g["id"] for g in games]
    assert pending(redis_client, ids) > 0  # taken by the dead worker, never settled
    workers()
    expected = {(g, seq) for g in ids for seq, _seat in expected_turns(hook_client, g)}
    assert len(expected) >= 4 * 6

    def all_there(got: list) -> bool:  # noqa: ANN001
        return {(r.json()["game_id"], r.json()["seq"]) for r in got} >= expected

    assert receiver.wait_for(all_there, timeout=60)
    by_id: dict[str, bytes] = {}
    for created in games:
        mine = [r for r in receiver.delivered() if r.json()["game_id"] == created["id"]]
        for body, received in zip(verified(created, mine), mine, strict=True):
            assert (
                by_id.setdefault(body["id"], received.body) == received.body
            )  # a repeat is the same
    assert len(by_id) == len(expected)  # one delivery id per queued delivery
    deadline = time.monotonic() + 10  # the last answers are on their way back
    while pending(redis_client, ids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pending(redis_client, ids) == 0
    assert not any(redis_client.exists(keys.outbox_key(keys.slot_of(g), keys.OUTBOX)) for g in ids)
