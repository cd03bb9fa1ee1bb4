"""GameStore's expiry: every key of a game gets its TTL, refreshed by each write, taken
from the config."""

from __future__ import annotations

import redis

from service.config import Config
from service.store import GameStore, key
from tests.store.games import new_id


def test_ttl_is_set_and_refreshed(store: GameStore, redis_client: redis.Redis) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"e"])
    state, events = key(gid, "state"), key(gid, "events")
    ttl = store.game_ttl_seconds
    assert ttl - 5 < redis_client.ttl(state) <= ttl
    assert ttl - 5 < redis_client.ttl(events) <= ttl
    redis_client.expire(state, 100)
    redis_client.expire(events, 100)
    store.commit(gid, 1, b"d2", idempotency=("abc", b"fp", b"resp"))
    assert ttl - 5 < redis_client.ttl(state) <= ttl
    assert ttl - 5 < redis_client.ttl(events) <= ttl
    idem_ttl = store.idempotency_ttl_seconds
    assert idem_ttl - 5 < redis_client.ttl(key(gid, "idem")) <= idem_ttl
    assert idem_ttl - 5 < redis_client.ttl(key(gid, "idem-order")) <= idem_ttl


def test_ttls_come_from_config(redis_client: redis.Redis, redis_url: str) -> None:
    cfg = Config.from_env(
        {"REDIS_URL": redis_url, "GAME_TTL_SECONDS": "120", "IDEMPOTENCY_TTL_SECONDS": "30"}
    )
    store = GameStore.from_config(cfg)
    gid = new_id()
    store.create(gid, b"d")
    store.commit(gid, 1, b"d", idempotency=("k", b"f", b"r"))
    assert 110 < redis_client.ttl(key(gid, "state")) <= 120
    assert 20 < redis_client.ttl(key(gid, "idem")) <= 30
