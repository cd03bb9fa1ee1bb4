"""Building the Redis client: a real server, one Redis Sentinel names, a Redis
Cluster, or the embedded default.

Without ``REDIS_URL`` the service runs on :mod:`fakeredis` (with Lua) inside the
process.  Every client made by :func:`connect` in one process shares the same
embedded server, so threads see one another's writes; other processes do not,
which is why gunicorn runs a single worker then.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import redis
from redis.cluster import RedisCluster

from service.config import Config
from service.redact import redact_url
from service.store import bounded, sentinel
from service.store.failures import translate_errors

log = logging.getLogger(__name__)

RETRIES = 2
"""Retries of a command after a connection error or timeout (with a short backoff),
within the request's budget (``REDIS_TIMEOUT_SECONDS``, see :mod:`service.store.budget`):
every socket wait is also capped by that setting; blocking reads wait in shorter chunks."""

HEALTH_CHECK_INTERVAL_SECONDS = 15

RedisClient = Any
"""``redis.Redis``, ``redis.cluster.RedisCluster`` or ``fakeredis.FakeRedis``."""

_embedded_lock = threading.Lock()
_embedded_server: Any = None


def _embedded() -> Any:
    global _embedded_server
    import fakeredis  # only needed for the embedded default

    with _embedded_lock:
        if _embedded_server is None:
            log.warning(
                "REDIS_URL is not set: using the embedded in-process store. This is not for "
                "production: games live in this one process only and are lost on restart."
            )
            _embedded_server = fakeredis.FakeServer()
        return fakeredis.FakeRedis(server=_embedded_server, decode_responses=False)


def connect(config: Config) -> RedisClient:
    """A Redis client for ``config`` (raw bytes responses, short timeouts, a few retries,
    at most ``REDIS_MAX_CONNECTIONS`` connections per server).

    Raises :class:`~service.store.store_errors.StoreUnavailable` if a Redis Cluster
    cannot be reached to discover its nodes; a plain client (and one of the
    primary Redis Sentinel names, :mod:`service.store.sentinel`) connects lazily
    on its first command.
    """
    if config.redis_url is None:
        return _embedded()
    url = config.redis_url
    options: dict[str, Any] = {
        "decode_responses": False,
        **bounded.options(url, config.redis_timeout_seconds, RETRIES),
    }
    pool = bounded.pool_options(config.redis_max_connections, config.redis_timeout_seconds)
    if config.redis_sentinels:
        log.info(
            "connecting to the primary %r of Redis Sentinels %s",
            config.redis_sentinel_master,
            ",".join(f"{host}:{port}" for host, port in config.redis_sentinels),
        )
        return sentinel.master_client(config, RETRIES, pool)
    log.info(
        "connecting to %s at %s",
        "Redis Cluster" if config.redis_cluster else "Redis",
        redact_url(config.redis_url),
    )
    if config.redis_cluster:
        # RedisCluster lets a rediss:// URL choose its connection class: spell it
        # redis:// (the bounded TLS class is chosen above, from the real scheme)
        if url.startswith("rediss://"):
            url = "redis://" + url[len("rediss://") :]
        with translate_errors():
            return RedisCluster.from_url(
                url, connection_pool_class=redis.BlockingConnectionPool, **options, **pool
            )
    return redis.Redis(
        connection_pool=redis.BlockingConnectionPool.from_url(
            url, health_check_interval=HEALTH_CHECK_INTERVAL_SECONDS, **options, **pool
        )
    )


def is_cluster(client: RedisClient) -> bool:
    """Whether ``client`` is a Redis Cluster's (a script's keys must share a slot)."""
    return isinstance(client, RedisCluster)


Subscribers = Callable[[str], tuple[str, Callable[[], Any]]]
"""``channel -> (shard name, make the shard's subscriber)``, for
:class:`~service.store.wakeups.Wakeups`."""


def subscribers(client: RedisClient) -> Subscribers:
    """Where ``client``'s sharded pub/sub channels are read: one shard for a plain
    Redis or the embedded store, the primary serving the channel's slot on Redis
    Cluster.  A subscriber has a connection of its own, made like ``client``'s."""
    if isinstance(client, RedisCluster):

        def on_cluster(channel: str) -> tuple[str, Callable[[], Any]]:
            with translate_errors():
                node = client.nodes_manager.get_node_from_slot(client.keyslot(channel))
            return node.name, lambda: _own_connection(node.redis_connection)

        return on_cluster
    return lambda channel: ("redis", lambda: _own_connection(client))


def _own_connection(client: Any) -> Any:
    """A pub/sub of ``client``'s server, on a connection outside ``client``'s pool
    (of the primary Sentinels name: one that fails once they name another)."""
    pool = client.connection_pool
    own = redis.ConnectionPool(connection_class=pool.connection_class, **pool.connection_kwargs)
    if isinstance(pool, sentinel.BlockingSentinelPool):
        return sentinel.FollowingPubSub(pool, connection_pool=own)
    return type(client)(connection_pool=own).pubsub()
