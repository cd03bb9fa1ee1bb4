"""Refused webhook targets (issue 39, item 7): refused at creation in every form the
resolver reads as an address, and at delivery -- by a real delivery worker whose
resolver is a DNS server on loopback that maps a name to a private address -- with
no connection opened, no retry, and nothing said of what the name resolved to."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
import redis
from flask.testing import FlaskClient

from harness.dns_server import DnsServer, lookup
from harness.webhook_receiver import WebhookReceiver
from service.config import Config
from service.store import connect, keys
from service.webhooks.sender import Sender
from service.webhooks.worker import DeliveryWorker
from tests.webhooks.test_delivery import PLAYERS, auth, create

PRIVATE = "10.0.0.7"


@pytest.mark.parametrize(
    "url",
    [
        "https://2130706433/",
        "https://0x7f000001/",
        "https://0177.0.0.1/",
        "https://127.1/",
        "https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",
        "https://localhost./",
        "https://0xa9fea9fe/latest/meta-data/",
        "https://[64:ff9b::a9fe:a9fe]/",
        "https://[64:ff9b:1::808:808]/",
        "https://[::ffff:0:a00:1]/",
        "https://[::a00:1]/",
        "https://metadata.google.internal/",
    ],
)
def test_the_create_endpoint_refuses_every_address_form(client: FlaskClient, url: str):
    """With the shipped settings: a 422 naming the field."""
    answer = client.post("/v1/games", json={"players": PLAYERS, "webhook": {"url": url}})
    assert answer.status_code == 422, answer.get_json()
    problem = answer.get_json()
    assert problem["code"] == "WEBHOOK_URL_REFUSED"
    assert "webhook" in orjson.dumps(problem["errors"]).decode()


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    with DnsServer({"bad.hooks.test": [PRIVATE], "good.hooks.test": ["127.0.0.1"]}) as running:
        yield running


@pytest.fixture
def stub_resolved_worker(
    dns: DnsServer, hook_config: Callable[..., Config]
) -> Iterator[DeliveryWorker]:
    """A delivery worker (loopback and http allowed, as in the tests) whose every lookup
    goes to the loopback DNS server."""
    config = hook_config()
    sender = Sender(
        timeout=config.webhook_timeout_seconds,
        allow_http=True,
        allow_loopback=True,
        resolver=lambda host, _port: lookup(host, dns.port),
    )
    worker = DeliveryWorker(connect(config), config, sender=sender).start()
    yield worker
    worker.stop()


def test_a_name_resolving_to_a_private_address_is_refused_once_and_for_good(
    hook_client: FlaskClient,
    redis_client: redis.Redis,
    receiver: WebhookReceiver,
    stub_resolved_worker: DeliveryWorker,
    only_loopback_connections: list[str],
):
    bad = create(hook_client, f"http://bad.hooks.test:{receiver.port}/hooks", events=["turn"])
    good = create(hook_client, f"http://good.hooks.test:{receiver.port}/hooks", events=["turn"])
    # the name that resolves to loopback is delivered: the worker asks the stub
    assert receiver.wait_for(lambda got: any(r.json()["game_id"] == good["id"] for r in got))
    attempts: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    while not attempts and time.monotonic() < deadline:
        log = hook_client.get(
            f"/v1/games/{bad['id']}/webhook", headers=auth(bad["webhook"]["token"])
        )
        attempts = log.get_json()["attempts"]
        if not attempts:
            time.sleep(0.1)
    assert len(attempts) == 1, attempts
    (refused,) = attempts
    assert refused["outcome"] == "failed" and refused["next_attempt_at"] is None
    assert refused["status"] is None
    assert refused["error"] == "refused: bad.hooks.test: no address a delivery may reach"
    assert PRIVATE not in orjson.dumps(attempts).decode()  # no DNS oracle
    # nothing left to retry: no later attempt queued, nothing pending in its outbox
    slot = keys.slot_of(bad["id"])
    later = redis_client.zrange(keys.outbox_key(slot, keys.OUTBOX_LATER), 0, -1)
    assert not [m for m in later if bad["id"].encode() in m]
    stream = keys.outbox_key(slot, keys.OUTBOX)
    entries = redis_client.xrange(stream) if redis_client.exists(stream) else []
    assert not [e for e in entries if bad["id"].encode() in e[1][b"h"]]
    # and no connection but the good one's, to loopback
    assert set(only_loopback_connections) == {"127.0.0.1"}
    assert not [r for r in receiver.received if r.json()["game_id"] == bad["id"]]
