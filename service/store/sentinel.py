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
  learnt the new address, so the next requests do not first meet the old one;
* an old primary still up and still a primary in its own eyes (``SENTINEL
  FAILOVER``, or one cut off from the Sentinels but not from the service) is
  left too, though its connections keep working: it goes on accepting writes
  for some 10 s, until the Sentinels make it a replica of the new one and
  everything written there meanwhile is lost.  So each Sentinel-backed pool
  asks the Sentinels every :data:`FOLLOW_SECONDS` (:class:`Follower`, a
  thread -- a greenlet under gevent); when they name another primary, the
  pool's idle connections are dropped, each busy one when it is given back,
  and the subscribers of the wake-ups (:class:`FollowingPubSub`) reconnect;
* a Sentinel in the middle of a failover it leads (``failover_in_progress``)
  is not asked: it names the old primary until the failover ends, seconds
  after the others name the promoted replica.

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

import logging
import threading
import weakref
from typing import Any

import redis
from redis.client import PubSub
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
from service.store.shutdown import stop_on_shutdown

log = logging.getLogger(__name__)

SENTINEL_TIMEOUT_SECONDS = 0.5
"""Most one question to one Sentinel waits (a socket connect or a reply)."""

FOLLOW_SECONDS = 1.0
"""How often a Sentinel-backed pool asks the Sentinels which primary they name."""

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


class FollowingSentinel(Sentinel):
    """redis-py's ``Sentinel``, not taking the word of one leading a failover."""

    def check_master_state(self, state: dict[str, Any], service_name: str) -> bool:
        """Whether a Sentinel's view of the primary is one to follow: redis-py's
        checks (a primary, not down), and no failover in progress (the leader
        of one names the old primary until it ends; the others, told by it,
        name the promoted replica as soon as it answers as a primary)."""
        usable = super().check_master_state(state, service_name)  # type: ignore[no-untyped-call]
        return bool(usable) and "failover_in_progress" not in str(state.get("flags", ""))


class BlockingSentinelPool(SentinelConnectionPool, redis.BlockingConnectionPool):
    """redis-py's Sentinel pool, but bounded as the service's other pools are: at
    most ``max_connections``, a caller waiting up to ``timeout`` for one; and
    following the primary the Sentinels name while its connections still work
    (:class:`Follower`, stopped when the pool is closed or collected)."""

    def __init__(self, service_name: str, sentinel_manager: Sentinel, **kwargs: Any) -> None:
        super().__init__(service_name, sentinel_manager, **kwargs)  # type: ignore[no-untyped-call]
        self.follower = Follower(self)

    def disconnect(self, inuse_connections: bool = True) -> None:
        """Close the connections; all of them (the client is closed): stop following too."""
        if inuse_connections:
            self.follower.stop()
        super().disconnect(inuse_connections)


class Follower:
    """Asks the Sentinels every :data:`FOLLOW_SECONDS` which primary they name,
    for one pool, through redis-py's ``get_master_address``: when they name
    another, it drops the pool's idle connections (its busy ones are dropped
    as they are given back; those of :class:`FollowingPubSub` check the
    address before use).  Stops when told, when the process shuts down, or
    once its pool is collected."""

    def __init__(self, pool: SentinelConnectionPool) -> None:
        self._pool = weakref.ref(pool)
        self._stopped = threading.Event()
        stop_on_shutdown(self)
        threading.Thread(target=self._run, name="sentinel-follower", daemon=True).start()

    def stop(self) -> None:
        self._stopped.set()

    def _run(self) -> None:
        while not self._stopped.wait(FOLLOW_SECONDS):
            pool = self._pool()
            if pool is None:
                return
            try:
                before = primary_address(pool)
                pool.get_master_address()  # type: ignore[no-untyped-call]
                now = primary_address(pool)
                if before is not None and now != before:
                    log.warning("the Sentinels name another primary: %s:%s", *now or ("?", "?"))
            except (redis.ConnectionError, redis.TimeoutError) as exc:  # none to name now
                log.debug("asking the Sentinels for the primary: %s", exc)
            del pool


class FollowingPubSub(PubSub):
    """A pub/sub of the primary the Sentinels name: once they name another (as
    ``primary_pool`` last learnt it), reading it fails as a broken connection
    would, and its reader reconnects to the one they name (see
    :mod:`service.store.wakeups`)."""

    def __init__(self, primary_pool: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.primary_pool = primary_pool

    def get_message(
        self, ignore_subscribe_messages: bool = False, timeout: float = 0.0
    ) -> dict[str, Any] | None:
        conn = self.connection
        primary = primary_address(self.primary_pool)
        if conn is not None and conn.is_connected and primary is not None:
            if (str(conn.host), int(conn.port)) != primary:
                raise redis.ConnectionError("the Sentinels name another primary")
        return super().get_message(ignore_subscribe_messages, timeout)  # type: ignore[no-any-return]


def primary_address(pool: Any) -> tuple[str, int] | None:
    """The primary's address as the Sentinels last named it to ``pool`` (None if
    ``pool`` is not a Sentinel pool, or has not asked yet)."""
    address = getattr(pool, "master_address", None)
    return None if address is None else (str(address[0]), int(address[1]))


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
    """A :class:`FollowingSentinel` over ``REDIS_SENTINELS``, each asked within
    :data:`SENTINEL_TIMEOUT_SECONDS`."""
    timeout = min(SENTINEL_TIMEOUT_SECONDS, config.redis_timeout_seconds)
    return FollowingSentinel(  # type: ignore[no-untyped-call]
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


def follow_limiter(storage: Any) -> None:
    """Have the ``limits`` library's Sentinel storage (its ``storage`` client of the
    primary) leave a deposed primary still up as the store's pools do
    (:class:`Follower`, for as long as the storage lives)."""
    Follower(storage.storage.connection_pool)
