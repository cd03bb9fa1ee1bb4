"""Webhooks on a real Redis Cluster: each game's deliveries are queued in the outbox of
its own hash slot by its write script (no CROSSSLOT), the hint reaches a worker
subscribed on any node, and games spread over every node are all delivered."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from redis.cluster import RedisCluster

from harness.redis_cluster import start_cluster
from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from harness.webhook_receiver import WebhookReceiver
from service.config import Config
from service.store import connect, keys
from service.webhooks.worker import DeliveryWorker
from tests.api.conftest import make_app
from tests.webhooks.conftest import HOOK_ENV
from tests.webhooks.test_delivery import create, expected_turns, play, verified

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason=INSTALL_HINT)


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[RedisServer]]:
    with start_cluster(3) as servers:
        yield servers


def test_games_on_every_node_are_delivered(cluster: list[RedisServer], receiver: WebhookReceiver):
    env = {**HOOK_ENV, "REDIS_CLUSTER": "true"}
    app = make_app(cluster[0].url, **env)
    client = app.test_client()
    config = Config.from_env({"REDIS_URL": cluster[2].url, **env})
    worker = DeliveryWorker(connect(config), config).start()
    try:
        games = [create(client, receiver.url, events=["turn"]) for _ in range(8)]
        for created in games:
            play(client, created, moves=6)
        nodes = RedisCluster.from_url(cluster[0].url)
        owners = {
            nodes.get_node_from_key(keys.outbox_key(keys.slot_of(g["id"]), keys.OUTBOX)).name
            for g in games
        }
        owners_of_games = {nodes.get_node_from_key(g["id"]).name for g in games}
        nodes.close()
        assert owners == owners_of_games and len(owners) >= 2
        expected = {(g["id"], seq) for g in games for seq, _ in expected_turns(client, g["id"])}

        def all_there(got: list) -> bool:  # noqa: ANN001
            return {(r.json()["game_id"], r.json()["seq"]) for r in got} >= expected

        assert receiver.wait_for(all_there, timeout=30)
        for created in games:
            verified(
                created, [r for r in receiver.delivered() if r.json()["game_id"] == created["id"]]
            )
    finally:
        worker.stop()
