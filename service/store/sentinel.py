"""Following the primary through failovers: a client of the primary Redis Sentinel names.

With ``REDIS_SENTINELS`` and ``REDIS_SENTINEL_MASTER`` set, the store's client
(:func:`master_client`) is redis-py's ``Sentinel.master_for``, with the
service's bounded connections (:mod:`service.store.bounded`) made
Sentinel-managed: every new connection asks the Sentinels where the primary is
now, and connects there.  So after a failover the service follows the promoted
replica without a restart or a change of setting:

* a connection to the old primary fails (refused, reset, timed out) and is
  retried on a new one, which asks the Sentinels: until they have promoted a
  replica they still name the dead primary, and the request is answered 503
  ``STORE_UNAVAILABLE`` with ``Retry-After``; from the promotion on, the next
  connection reaches the new primary;
* a connection to an old primary still up but demoted (it answers ``READONLY``
  to writes) is dropped and the write retried on a new connection, as
  redis-py does for its own reads;
* idle connections to an old primary are dropped as soon as one connection has
  learnt the new address, so the next requests do not first meet the old one.

The game store's connections, the wake-ups' subscriber
connections (:mod:`service.store.wakeups`) and the rate limiter
(``redis+sentinel://``, :mod:`service.api.limits`) all make their connections
this way.  ``REDIS_URL`` still gives the scheme (``rediss://`` for TLS), user,
password, database and TLS options of the primary's connections; the Sentinels
themselves are reached in plain TCP without credentials, each within
:data:`SENTINEL_TIMEOUT_SECONDS` (and the request's budget).  A Sentinel that
does not answer is skipped for the next one.
"""

from __future__ import annotations

from typing import Any

import redis
from redis.connection import parse_url
from redis.sentinel import (
    Sentinel,
    SentinelConnectionPool,
    SentinelManagedConnection,
    SentinelManagedSSLConnection,
)

from service.config import Config
from service.store import bounded
from service.store.circuit import circuit_for

SENTINEL_TIMEOUT_SECONDS = 0.5
"""Most one question to one Sentinel waits (a socket connect or a reply)."""

_ADDRESS = ("host", "port", "path", "connection_class")
"""What ``REDIS_URL`` says that does not apply to a Sentinel-named primary."""


class BoundedSentinelConnection(bounded.Bounded, SentinelManagedConnection):
    """A bounded connection to the primary the Sentinels name now.  Its circuit
    breaker is the primary's by name, not by address: a failover changes the address."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.circuit = circuit_for(("sentinel", self.connection_pool.service_name))


class BoundedSentinelSSLConnection(BoundedSentinelConnection, SentinelManagedSSLConnection):
    pass


class BlockingSentinelPool(SentinelConnectionPool, redis.BlockingConnectionPool):
    """redis-py's Sentinel pool, but bounded as the service's other pools are: at
    most ``max_connections``, a caller waiting up to ``timeout`` for one."""


def connection_options(config: Config, retries: int) -> dict[str, Any]:
    """The keyword arguments of a connection to the Sentinel-named primary:
    ``REDIS_URL``'s credentials, database and TLS options, the bounded timeouts,
    ``retries`` within the budget, and the Sentinel-managed connection class."""
    assert config.redis_url is not None
    url = config.redis_url
    parsed = parse_url(url)  # type: ignore[no-untyped-call]
    options = {k: v for k, v in parsed.items() if k not in _ADDRESS}
    options.update(bounded.options(url, config.redis_timeout_seconds, retries))
    options["connection_class"] = (
        BoundedSentinelSSLConnection if url.startswith("rediss://") else BoundedSentinelConnection
    )
    return options


def sentinel_for(config: Config) -> Sentinel:
    """redis-py's ``Sentinel`` over ``REDIS_SENTINELS``, each asked within
    :data:`SENTINEL_TIMEOUT_SECONDS`."""
    timeout = min(SENTINEL_TIMEOUT_SECONDS, config.redis_timeout_seconds)
    return Sentinel(  # type: ignore[no-untyped-call]
        list(config.redis_sentinels),
        sentinel_kwargs={"socket_timeout": timeout, "socket_connect_timeout": timeout},
    )


def master_client(config: Config, retries: int, pool: dict[str, Any]) -> redis.Redis:
    """A client of the primary named ``REDIS_SENTINEL_MASTER`` by the Sentinels,
    following it through failovers; ``retries`` as for any store client, ``pool``
    the bounds of its connection pool (:func:`service.store.bounded.pool_options`)."""
    options = connection_options(config, retries)
    sentinel = sentinel_for(config)
    client: redis.Redis = sentinel.master_for(  # type: ignore[no-untyped-call]
        config.redis_sentinel_master,
        connection_pool_class=BlockingSentinelPool,
        **options,
        **pool,
    )
    return client


def limiter_uri(config: Config) -> str:
    """The ``limits`` library's URI of the Sentinels and the primary's name
    (credentials are given as options: :func:`limiter_options`)."""
    hosts = ",".join(f"{host}:{port}" for host, port in config.redis_sentinels)
    return f"redis+sentinel://{hosts}/{config.redis_sentinel_master}"


def limiter_options(config: Config, retries: int) -> dict[str, Any]:
    """The ``limits`` library's options for its Sentinel storage: the primary's
    connections made as the store's (``retries`` aside), the Sentinels asked
    without credentials and within :data:`SENTINEL_TIMEOUT_SECONDS`, and every
    counter read from the primary (never a replica a little behind)."""
    options = connection_options(config, retries)
    timeout = min(SENTINEL_TIMEOUT_SECONDS, config.redis_timeout_seconds)
    options["sentinel_kwargs"] = {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "username": None,
        "password": None,
    }
    options["use_replicas"] = False
    return options
