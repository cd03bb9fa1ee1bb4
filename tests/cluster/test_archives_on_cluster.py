"""Archives on a real Redis Cluster: the finishing write queues the game in its own
slot (one atomic script), the bot worker's archiver -- woken by the hint every node
forwards -- archives it and writes the players' histories and ratings in their own slots, and the
replay is served from the archive once the live keys are gone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from redis.crc import key_slot

from harness.redis_cluster import start_cluster
from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from service.botplay.worker import BotWorker
from service.hosting import apps
from service.store import keys
from service.store.archives import FinishedGames
from tests.api.conftest import make_app
from tests.apps.conftest import AppKey, bearer, two_player_game
from tests.apps.test_apps_mode import QUICK, play_to_the_end

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason=INSTALL_HINT)


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[RedisServer]]:
    with start_cluster(3) as servers:
        yield servers


def test_a_finished_game_is_archived_across_a_cluster(cluster: list[RedisServer]) -> None:
    flask_app = make_app(cluster[0].url, REDIS_CLUSTER="true", AUTH_MODE="apps")
    services = flask_app.extensions["t13"]
    store = services.store
    client = flask_app.test_client()
    record, key = apps.create_app_record(store.apps, "cards")
    auth = bearer(key)

    def token(player_id: str, name: str) -> str:
        made = client.post(f"/v1/players/{player_id}/tokens", json={"name": name}, headers=auth)
        assert made.status_code == 201, made.get_json()
        return str(made.get_json()["token"])

    ann, bob = token("u1", "ann"), token("u2", "bob")
    worker = BotWorker(store, services.config, sweeps=False).start()
    try:
        games = []
        for _ in range(2):
            game_id = two_player_game(client, AppKey(record.id, key), **QUICK)["id"]
            play_to_the_end(client, game_id, {0: [ann], 1: [bob]})
            queue_key = keys.outbox_key(keys.slot_of(game_id), keys.FINISHED)
            assert key_slot(queue_key.encode()) == keys.slot_of(game_id)
            games.append(game_id)
        finished = FinishedGames(store.client)
        for _ in range(400):  # woken by the finishing writes' hints: well within 20 s
            if all(finished.queued(g) is None for g in games):
                break
            time.sleep(0.05)
        assert all(store.archives.load(g) is not None for g in games)
        mine = client.get("/v1/me/history", headers=bearer(ann)).get_json()
        assert [g["id"] for g in mine["games"]] == games[::-1]
        assert all(g.startswith(record.id + "-") for g in games)
        # each player's ratings, in the player's own slot, count both games once
        for player in (ann, bob):
            me = client.get("/v1/me", headers=bearer(player)).get_json()
            assert [(r["ruleset"], r["table_size"], r["games"]) for r in me["ratings"]] == [
                ("classic", 2, 2)
            ]
        replay: Any = client.get(f"/v1/games/{games[0]}/replay", headers=auth).get_json()
        live = list(store.client.scan_iter(match=f"t13:{{{games[0]}}}:*"))
        assert live
        for name in live:
            store.client.delete(name)
        assert client.get(f"/v1/games/{games[0]}", headers=auth).status_code == 404
        archived = client.get(f"/v1/games/{games[0]}/replay", headers=bearer(bob))
        assert archived.status_code == 200 and archived.get_json() == replay
    finally:
        worker.stop()
