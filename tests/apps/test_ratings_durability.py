"""Ratings with confirmed writes (``REDIS_WAIT_REPLICAS``), on real replicas: a
player's change is confirmed before the finished game's entry goes (a replica that
does not confirm keeps the entry, and the next run counts the game once), and a
change applied and confirmed survives the primary's failover (Sentinel)."""

from __future__ import annotations

import time

import pytest

from harness.redis_replication import replicated
from harness.redis_server import redis_server_binary
from service.hosting import apps
from service.hosting.archiving import archive_game
from service.hosting.players import player_tag
from service.hosting.ratings import DEFAULT, current_rating
from service.store import GameStore, NotDurable
from service.store import keys as store_keys
from service.store.archives import FinishedGames
from tests.api.conftest import make_app
from tests.apps.conftest import AppKey, mint
from tests.apps.test_archives import LEASE_MS, finished_game, run_step
from tests.store.test_sentinel import sentinel_config, until_served

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason="needs redis-server on PATH")


def test_a_change_not_confirmed_keeps_the_entry_and_counts_once_later() -> None:
    with replicated(replicas=1) as group:
        made = make_app(
            group.primary.url,
            AUTH_MODE="apps",
            REDIS_WAIT_REPLICAS="1",
            REDIS_WAIT_TIMEOUT_MS="300",
        )
        services = made.extensions["t13"]
        store, config, client = services.store, services.config, made.test_client()
        record, key = apps.create_app_record(store.apps, "cards")
        app = AppKey(record.id, key)
        ann, bob = mint(client, app, "u1", "ann"), mint(client, app, "u2", "bob")
        game_id = finished_game(client, app, ann, bob)
        queue, slot = FinishedGames(store.client), store_keys.slot_of(game_id)
        now = int(time.time() * 1000)
        taken, _ = queue.claim(slot, now, LEASE_MS, 10)
        assert [claimed for claimed, _due in taken] == [game_id]
        group.replicas[0].pause()  # it confirms nothing now
        try:
            with pytest.raises(NotDurable):
                archive_game(store, config, game_id)
        finally:
            group.replicas[0].resume()
        # the first player's change is on the primary, unconfirmed: the step stopped
        # there, and the archiver (an exception) leaves the entry to the next run
        assert queue.queued(game_id) == now + LEASE_MS
        assert current_rating(store, app.id, "classic", 2, "u1").games == 1
        assert current_rating(store, app.id, "classic", 2, "u2") == DEFAULT
        assert run_step(store, config, game_id, now + LEASE_MS)
        assert queue.queued(game_id) is None
        for player_id in ("u1", "u2"):
            assert current_rating(store, app.id, "classic", 2, player_id).games == 1
        replica = group.replicas[0].client()
        try:  # the replica has both changes
            assert len(list(replica.scan_iter(match="t13:player:*:rated"))) == 2
        finally:
            replica.close()


def test_a_confirmed_change_survives_the_primarys_failover() -> None:
    with replicated(replicas=2, sentinels=3) as group:
        store = GameStore.from_config(sentinel_config(group, REDIS_WAIT_REPLICAS="1"))
        app_id = "a1b2c3d4e5"
        tag = player_tag(app_id, "u1")
        applied = store.ratings.apply(
            tag,
            f"{app_id}-{'g' * 22}",
            "classic:2",
            mu_change=1.25,
            sigma_before=DEFAULT.sigma,
            sigma_after=7.5,
            default=(DEFAULT.mu, DEFAULT.sigma),
        )
        assert applied.applied and applied.games == 1
        old = group.primary.port
        group.primary.kill()
        now, refused = until_served(
            lambda: current_rating(store, app_id, "classic", 2, "u1"), timeout=90
        )
        assert refused > 0 or group.named_primary() != old
        assert (now.mu, now.sigma, now.games) == (DEFAULT.mu + 1.25, 7.5, 1)
        # the game is recorded with it: applying it again changes nothing
        again, _refused = until_served(
            lambda: store.ratings.apply(
                tag,
                f"{app_id}-{'g' * 22}",
                "classic:2",
                mu_change=1.25,
                sigma_before=DEFAULT.sigma,
                sigma_after=7.5,
                default=(DEFAULT.mu, DEFAULT.sigma),
            ),
            timeout=90,
        )
        assert not again.applied and again.games == 1
        assert group.named_primary() not in (None, old)
