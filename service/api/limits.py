"""Per-client rate limits (Flask-Limiter), answered as 429 problem+json with Retry-After.

* ``POST /v1/games`` (create), ``POST /v1/games/{id}/players`` (join) and
  ``POST /v1/hands/evaluate`` (a hand's arrangement, CPU bound): per client IP
  (``request.remote_addr``; put a proxy that sets it correctly in front, e.g. werkzeug's
  ``ProxyFix``);
* ``POST /v1/games/{id}/moves``: per bearer token, keyed by a hash of the token (the
  raw token never reaches the limiter's storage); requests without a token by IP;
* failed authentication (every 401, on any endpoint): per client IP
  (``RATE_LIMIT_AUTH_FAILURES``), so bogus tokens, each with a move budget of its own,
  cannot buy an address unlimited work: over the limit the 401 becomes a 429.

Create and join are limited by Flask-Limiter on their Flask routes.  Moves are
limited by :class:`MoveLimiter` -- the same ``limits`` library and fixed window,
called by the move handler itself -- because moves are answered by the fast
lane (:mod:`service.api.fastlane`) whether or not limits are on: Flask's request
machinery and Flask-Limiter's per-request evaluation cost more than the move.

Counters live in the service's Redis (``REDIS_URL``), so every worker and instance
shares them; with the embedded store they are kept in process memory.  While the
limiter's storage is unreachable the limits fall back to process memory and the
request goes on (it then answers 503 from the game store if Redis is really down,
never 500).  ``RATE_LIMITS=false`` turns all of this off.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from flask import Flask, Response, request
from flask_limiter import Limiter, RateLimitExceeded
from limits import parse_many
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import FixedWindowRateLimiter

from service.api.auth import bearer_token
from service.api.context import Call
from service.api.problems import ApiError, problem
from service.config import Config
from service.hosting.tokens import hash_token
from service.store import bounded

log = logging.getLogger(__name__)

KEY_PREFIX = "t13rl"
STORAGE_RETRIES = 0
"""A limiter command is not retried: on an error the limits fall back to memory."""

FALLBACK_SECONDS = 30.0
"""After a storage error, moves are counted in process memory for this long."""

# endpoint -> attribute of Config holding the rate (Flask-Limiter, per client IP)
LIMITED_ENDPOINTS: dict[str, str] = {
    "games.Games": "rate_limit_create",
    "games.Players": "rate_limit_join",
    "rules.Evaluate": "rate_limit_evaluate",
}


def client_ip() -> str:
    return _ip(request.remote_addr)


def _ip(address: str | None) -> str:
    return f"ip:{address or 'unknown'}"


def client_token(call: Call) -> str:
    """The hash of the request's bearer token (its IP without one); never the token."""
    token = bearer_token(call)
    if token is None:
        return _ip(call.environ.get("REMOTE_ADDR"))
    return "tok:" + hash_token(token)[:32]


class MoveLimiter:
    """A limit counted by the handlers (not by Flask-Limiter), fixed window: moves
    (``RATE_LIMIT_MOVES``) per bearer token, or failed authentications per address.

    >>> limiter = MoveLimiter("2/minute", "memory://")
    >>> limiter.retry_after("tok:abc"), limiter.retry_after("tok:abc")
    (None, None)
    >>> 1 <= limiter.retry_after("tok:abc") <= 60
    True
    """

    def __init__(self, rate: str, uri: str, name: str = "moves", **options: Any) -> None:
        self.name = name
        self.items = parse_many(rate)
        self.main = FixedWindowRateLimiter(storage_from_string(uri, **options))
        self.fallback = FixedWindowRateLimiter(MemoryStorage())
        self.main_down_until = 0.0

    def retry_after(self, client: str) -> int | None:
        """Count one move of ``client``: None if it is within the limits, else the
        seconds until the window that refused it ends."""
        limiter = self.main if time.monotonic() >= self.main_down_until else self.fallback
        try:
            return self._hit(limiter, client)
        except Exception as exc:  # the storage: Redis unreachable, timing out...
            log.warning("rate limit storage unavailable, counting in memory: %s", exc)
            self.main_down_until = time.monotonic() + FALLBACK_SECONDS
            return self._hit(self.fallback, client)

    def _hit(self, limiter: FixedWindowRateLimiter, client: str) -> int | None:
        for item in self.items:
            if not limiter.hit(item, KEY_PREFIX, self.name, client):
                reset = limiter.get_window_stats(item, KEY_PREFIX, self.name, client).reset_time
                return max(1, math.ceil(reset - time.time()))
        return None

    def check(self, call: Call) -> None:
        """Count the request's move; 429 with ``Retry-After`` when over the limit."""
        self._refuse_over(self.retry_after(client_token(call)))

    def check_failed_auth(self, call: Call) -> None:
        """Count a failed authentication against the request's address; 429 over it."""
        self._refuse_over(self.retry_after(_ip(call.environ.get("REMOTE_ADDR"))))

    def _refuse_over(self, wait: int | None) -> None:
        if wait is not None:
            raise ApiError(
                "RATE_LIMITED",
                f"rate limit exceeded ({self.name}: {self.describe()}); retry after {wait} s",
                headers={"Retry-After": str(wait)},
            )

    def describe(self) -> str:
        return "; ".join(str(item) for item in self.items)


def move_limiter(config: Config) -> MoveLimiter | None:
    """The limit on moves for ``config`` (None when ``RATE_LIMITS`` is off)."""
    return _handler_limit(config, config.rate_limit_moves, "moves")


def auth_failure_limiter(config: Config) -> MoveLimiter | None:
    """The limit on failed authentications per address (None when ``RATE_LIMITS`` is off)."""
    return _handler_limit(config, config.rate_limit_auth_failures, "failed authentications")


def _handler_limit(config: Config, rate: str, name: str) -> MoveLimiter | None:
    if not config.rate_limits_enabled:
        return None
    return MoveLimiter(rate, storage_uri(config), name, **_storage_options(config))


def _storage_options(config: Config) -> dict[str, Any]:
    """The game store's bounds for the limiter's Redis too: its waits count in the
    request's Redis budget, it shares the server's circuit breaker, no retry."""
    if config.redis_url is None:
        return {}
    options = bounded.options(config.redis_url, config.redis_timeout_seconds, STORAGE_RETRIES)
    if config.redis_cluster:  # a cluster's nodes take no connection class from here
        del options["connection_class"]
    return options


def storage_uri(config: Config) -> str:
    """The limits library's URI for the service's Redis (``memory://`` when embedded)."""
    url = config.redis_url
    if url is None:
        return "memory://"
    if config.redis_cluster:
        return "redis+cluster://" + url.split("://", 1)[1]
    if url.startswith("unix://"):
        return "redis+unix://" + url[len("unix://") :]
    return url


def install(app: Flask, config: Config) -> Limiter | None:
    """Rate-limit the game endpoints of ``app`` (no-op when ``RATE_LIMITS`` is off).

    Call after the blueprints are registered.
    """
    if not config.rate_limits_enabled:
        return None
    limiter = Limiter(
        key_func=client_ip,
        storage_uri=storage_uri(config),
        storage_options=_storage_options(config),
        strategy="fixed-window",
        key_prefix=KEY_PREFIX,
        swallow_errors=True,
        in_memory_fallback_enabled=True,
        headers_enabled=False,
    )
    # only the limited endpoints consult the storage (a dead storage's health
    # check would otherwise hold up any request, /readyz included)
    limiter.request_filter(lambda: request.endpoint not in LIMITED_ENDPOINTS)
    limiter.init_app(app)
    for endpoint, setting in LIMITED_ENDPOINTS.items():
        view = app.view_functions[endpoint]
        app.view_functions[endpoint] = limiter.limit(
            getattr(config, setting), key_func=client_ip, methods=["POST"]
        )(view)

    def too_many(exc: RateLimitExceeded) -> Response:
        retry_after = 1
        current = limiter.current_limit
        if current is not None:
            retry_after = max(1, math.ceil(current.window[0] - time.time()))
        return problem(
            "RATE_LIMITED",
            f"rate limit exceeded ({exc.description}); retry after {retry_after} s",
            headers={"Retry-After": str(retry_after)},
        )

    app.register_error_handler(RateLimitExceeded, too_many)
    return limiter
