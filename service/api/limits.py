"""Per-client rate limits, answered as 429 problem+json with Retry-After.

* ``POST /v1/games`` (create), ``POST /v1/games/{id}/players`` (join; leaving
  and renaming count as joins), ``GET /v1/games`` (the lobby's listing),
  ``POST /v1/lobby/quick-join`` and ``POST /v1/hands/evaluate`` (a hand's
  arrangement, CPU bound), ``GET /v1/games/{id}/replay``: per client IP
  (``REMOTE_ADDR``: behind proxies, the client's address taken from
  ``X-Forwarded-For`` by ``TRUSTED_PROXY_HOPS``, see :func:`service.app.create_app`);
* ``POST /v1/games/{id}/moves``, ``POST``/``DELETE /v1/games/{id}/autopilot`` and
  ``POST /v1/games/{id}/resign`` (seat changes), ``POST /v1/games/{id}/stream-tickets``:
  per bearer token, keyed by a hash of the token (the raw token never reaches the
  limiter's storage); requests without a token by IP;
* failed authentication (every 401, on any endpoint): per client IP
  (``RATE_LIMIT_AUTH_FAILURES``), so bogus tokens, each with a move budget of its own,
  cannot buy an address unlimited work: over the limit the 401 becomes a 429.

Every limit is counted the same way: by :class:`RateLimiter`, the ``limits``
library's fixed window.  The endpoints' limits are counted before their view
runs (:func:`install`'s hook: a refused request is not even parsed); failed
authentications where the 401 is decided (:func:`service.api.auth.unauthorized`),
moves by their handler (:func:`service.api.handlers.make_move`).

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask, request
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
        refused = self._refused(limit, client)
        if refused is not None:
            item, wait = refused
            raise ApiError(
                "RATE_LIMITED",
                f"rate limit exceeded ({limit.describe(item)}); retry after {wait} s",
                headers={"Retry-After": str(wait)},
            )

    def _refused(self, limit: Limit, client: str) -> tuple[RateLimitItem, int] | None:
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


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The service's limits (:meth:`from_config`) and the limiter counting them."""

    limiter: RateLimiter
    create: Limit
    join: Limit
    evaluate: Limit
    listing: Limit
    quick_join: Limit
    moves: Limit
    auth_failures: Limit
    seat_changes: Limit
    stream_tickets: Limit
    replay: Limit

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
            Limit.parse("create", config.rate_limit_create),
            Limit.parse("join", config.rate_limit_join),
            Limit.parse("evaluate", config.rate_limit_evaluate),
            Limit.parse("list", config.rate_limit_list),
            Limit.parse("quick-join", config.rate_limit_quick_join),
            Limit.parse("moves", config.rate_limit_moves, "moves"),
            Limit.parse(
                "failed authentications",
                config.rate_limit_auth_failures,
                "failed authentications",
            ),
            Limit.parse("seat-changes", config.rate_limit_seat_changes, "seat changes"),
            Limit.parse("stream-tickets", config.rate_limit_stream_tickets, "stream tickets"),
            Limit.parse("replay", config.rate_limit_replay),
        )

    def count_move(self, token: str | None, environ: dict[str, Any]) -> None:
        """Count a move against its client (its token); 429 over the limit."""
        self.limiter.check(self.moves, by_token(token, environ))

    def count_auth_failure(self, environ: dict[str, Any]) -> None:
        """Count a failed authentication against the request's address; 429 over it."""
        self.limiter.check(self.auth_failures, by_address(environ))


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


def install(app: Flask, limits: RateLimits, bearer_token: Callable[[], str | None]) -> None:
    """Count the limited endpoints' requests before their views run.

    Only these requests consult the storage (a dead storage would otherwise
    hold up any request, /readyz included).  Each is counted per client address,
    or per bearer token (:func:`by_token`; ``bearer_token()`` is the request's)
    for the seat's own actions."""
    per_address = {
        ("games.Games", "POST"): limits.create,
        ("games.Players", "POST"): limits.join,
        ("rules.Evaluate", "POST"): limits.evaluate,
        ("lobby.Listing", "GET"): limits.listing,
        ("lobby.QuickJoin", "POST"): limits.quick_join,
        ("lobby.OwnSeat", "PATCH"): limits.join,
        ("lobby.OwnSeat", "DELETE"): limits.join,
        ("fairplay.Replay", "GET"): limits.replay,
    }
    per_token = {
        ("fairplay.Autopilot", "POST"): limits.seat_changes,
        ("fairplay.Autopilot", "DELETE"): limits.seat_changes,
        ("lobby.Resign", "POST"): limits.seat_changes,
        ("games.StreamTickets", "POST"): limits.stream_tickets,
    }

    @app.before_request
    def _count() -> None:
        endpoint = (request.endpoint or "", request.method)
        limit = per_address.get(endpoint)
        if limit is not None:
            limits.limiter.check(limit, by_address(request.environ))
            return
        limit = per_token.get(endpoint)
        if limit is not None:
            limits.limiter.check(limit, by_token(bearer_token(), request.environ))
