"""Per-client rate limits, answered as 429 problem+json with Retry-After.

Which endpoint counts against which limit (:class:`Rate`), and per what
(:class:`Per`: the client's address, or the hash of its bearer token, so the raw
token never reaches the limiter's storage), is declared by the route table
(:mod:`service.api.routes`) and counted before the endpoint's handler runs, on
either path (Flask's, the fast lane's: :mod:`service.api.app_limits`, which counts
the requests of an app's backend and players against their app instead): a
refused request is not even parsed.
Addresses are ``REMOTE_ADDR``: behind proxies, the client's taken from
``X-Forwarded-For`` by ``TRUSTED_PROXY_HOPS`` (see :func:`service.app.create_app`).
Failed authentications (every 401, on any endpoint) are counted per address where
the 401 is decided (:func:`service.api.auth.unauthorized`), so bogus tokens, each
with a move budget of its own, cannot buy an address unlimited work: over
``RATE_LIMIT_AUTH_FAILURES`` the 401 becomes a 429.  Every limit is counted the
same way: by :class:`RateLimiter`, the ``limits`` library's fixed window.

Counters live in the service's Redis (``REDIS_URL``; the primary the Sentinels
name, followed through failovers, with ``REDIS_SENTINELS``), so every worker and
instance shares them; with the embedded store they are kept in process memory.  While the
limiter's storage is unreachable the limits fall back to process memory and the
request goes on (it then answers 503 from the game store if Redis is really down,
never 500).  ``RATE_LIMITS=false`` turns all of this off.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from enum import Enum
from typing import Any

from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import FixedWindowRateLimiter

from service.api.problems import ApiError
from service.config import Config
from service.hosting.tokens import hash_token
from service.store import bounded, sentinel

log = logging.getLogger(__name__)

KEY_PREFIX = "t13rl"
STORAGE_RETRIES = 0
"""A limiter command is not retried: on an error the limits fall back to memory."""

FALLBACK_SECONDS = 30.0
"""After a storage error, limits are counted in process memory for this long."""


@dataclass(frozen=True, slots=True)
class Limit:
    """One limit: its ``name`` (part of its counters' keys) and its rates.  A
    ``label``, when given, names the limit in the 429's detail, with all its rates;
    else the detail gives the rate that refused the request."""

    name: str
    items: tuple[RateLimitItem, ...]
    label: str | None = None

    @classmethod
    def parse(cls, name: str, rate: str, label: str | None = None) -> Limit:
        return cls(name, tuple(parse_many(rate)), label)

    def describe(self, refused: RateLimitItem) -> str:
        if self.label is None:
            return str(refused)
        return f"{self.label}: " + "; ".join(str(item) for item in self.items)


class RateLimiter:
    """Counts every limit, fixed window, in one storage (with process memory as
    the fallback while that storage fails).

    >>> limiter = RateLimiter("memory://")
    >>> moves = Limit.parse("moves", "2/minute", "moves")
    >>> limiter.check(moves, "tok:abc"), limiter.check(moves, "tok:abc")
    (None, None)
    >>> limiter.check(moves, "tok:abc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    service.api.problems.ApiError: rate limit exceeded (moves: 2 per 1 minute); retry after ... s
    """

    def __init__(self, uri: str, **options: Any) -> None:
        self.main = FixedWindowRateLimiter(storage_from_string(uri, **options))
        self.fallback = FixedWindowRateLimiter(MemoryStorage())
        self.main_down_until = 0.0

    def check(self, limit: Limit, client: str) -> None:
        """Count one request of ``client``; 429 with ``Retry-After`` over ``limit``."""
        refused = self.refused(limit, client)
        if refused is not None:
            item, wait = refused
            raise ApiError(
                "RATE_LIMITED",
                f"rate limit exceeded ({limit.describe(item)}); retry after {wait} s",
                headers={"Retry-After": str(wait)},
            )

    def refused(self, limit: Limit, client: str) -> tuple[RateLimitItem, int] | None:
        """Count one request of ``client``: None within ``limit``, else the rate
        that refused it and the seconds until its window ends."""
        strategy = self.main if time.monotonic() >= self.main_down_until else self.fallback
        try:
            return _hit(strategy, limit, client)
        except Exception as exc:  # the storage: Redis unreachable, timing out...
            log.warning("rate limit storage unavailable, counting in memory: %s", exc)
            self.main_down_until = time.monotonic() + FALLBACK_SECONDS
            return _hit(self.fallback, limit, client)


def _hit(
    strategy: FixedWindowRateLimiter, limit: Limit, client: str
) -> tuple[RateLimitItem, int] | None:
    for item in limit.items:
        if not strategy.hit(item, KEY_PREFIX, limit.name, client):
            reset = strategy.get_window_stats(item, KEY_PREFIX, limit.name, client).reset_time
            return item, max(1, math.ceil(reset - time.time()))
    return None


def by_address(environ: dict[str, Any]) -> str:
    """The client as its address."""
    return f"ip:{environ.get('REMOTE_ADDR') or 'unknown'}"


def by_token(token: str | None, environ: dict[str, Any]) -> str:
    """The client as the hash of its bearer token (its address without one);
    never the token itself."""
    if token is None:
        return by_address(environ)
    return "tok:" + hash_token(token)[:32]


class Rate(Enum):
    """Each rate limit: the name of its counters, its setting (a :class:`Config`
    field) and, when given, its label in a 429's detail.  Which requests each
    counts, and per what, is declared by the route table (:mod:`service.api.routes`);
    failed authentications are counted where the 401 is decided."""

    CREATE = ("create", "rate_limit_create", None)
    JOIN = ("join", "rate_limit_join", None)
    EVALUATE = ("evaluate", "rate_limit_evaluate", None)
    LIST = ("list", "rate_limit_list", None)
    QUICK_JOIN = ("quick-join", "rate_limit_quick_join", None)
    MOVES = ("moves", "rate_limit_moves", "moves")
    AUTH_FAILURES = ("failed authentications", "rate_limit_auth_failures", "failed authentications")
    SEAT_CHANGES = ("seat-changes", "rate_limit_seat_changes", "seat changes")
    STREAM_TICKETS = ("stream-tickets", "rate_limit_stream_tickets", "stream tickets")
    REPLAY = ("replay", "rate_limit_replay", None)
    PLAYER_TOKENS = ("player-tokens", "rate_limit_player_tokens", "player tokens")

    @property
    def setting(self) -> str:
        """The :class:`Config` field of its rates (``rate_limit_moves``)."""
        return str(self.value[1])

    @property
    def label(self) -> str | None:
        """How a 429's detail names it, if it does (else it gives the rate alone)."""
        label = self.value[2]
        return None if label is None else str(label)

    def limit(self, config: Config) -> Limit:
        return Limit.parse(self.value[0], getattr(config, self.setting), self.label)


class Per(Enum):
    """Whom a limit counts a request against."""

    ADDRESS = "address"
    """The client's address (:func:`by_address`)."""
    TOKEN = "token"
    """The hash of the request's bearer token, its address without one (:func:`by_token`)."""


@dataclass(frozen=True, slots=True)
class Limited:
    """An endpoint's rate limit, counted per ``per`` (the route table's entries)."""

    rate: Rate
    per: Per = Per.ADDRESS


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The service's limits (:meth:`from_config`) and the limiter counting them."""

    limiter: RateLimiter
    limits: dict[Rate, Limit]

    @classmethod
    def from_config(cls, config: Config) -> RateLimits | None:
        """The limits of ``config``; None when ``RATE_LIMITS`` is off."""
        if not config.rate_limits_enabled:
            return None
        limiter = RateLimiter(storage_uri(config), **_storage_options(config))
        if config.redis_sentinels:
            sentinel.follow_limiter(limiter.main.storage)
        return cls(
            limiter,
            {rate: rate.limit(config) for rate in Rate},
        )

    def count(self, rate: Rate, per: Per, token: str | None, environ: dict[str, Any]) -> None:
        """Count a request against its client (its address, or its ``token``
        for :attr:`Per.TOKEN`); 429 over the limit."""
        client = by_token(token, environ) if per is Per.TOKEN else by_address(environ)
        self.limiter.check(self.limits[rate], client)

    def count_auth_failure(self, environ: dict[str, Any]) -> None:
        """Count a failed authentication against the request's address; 429 over it."""
        self.limiter.check(self.limits[Rate.AUTH_FAILURES], by_address(environ))


def _storage_options(config: Config) -> dict[str, Any]:
    """The game store's bounds for the limiter's Redis too: its waits count in the
    request's Redis budget, it shares the server's circuit breaker, no retry."""
    if config.redis_url is None:
        return {}
    if config.redis_sentinels:
        return sentinel.limiter_options(config, STORAGE_RETRIES)
    options = bounded.options(config.redis_url, config.redis_timeout_seconds, STORAGE_RETRIES)
    if config.redis_cluster:  # a cluster's nodes take no connection class from here
        del options["connection_class"]
    return options


def storage_uri(config: Config) -> str:
    """The limits library's URI for the service's Redis (``memory://`` when embedded)."""
    url = config.redis_url
    if url is None:
        return "memory://"
    if config.redis_sentinels:
        return sentinel.limiter_uri(config)
    if config.redis_cluster:
        return "redis+cluster://" + url.split("://", 1)[1]
    if url.startswith("unix://"):
        return "redis+unix://" + url[len("unix://") :]
    return url
