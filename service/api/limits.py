"""Per-client rate limits (Flask-Limiter), answered as 429 problem+json with Retry-After.

* ``POST /v1/games`` (create) and ``POST /v1/games/{id}/players`` (join): per client IP
  (``request.remote_addr``; put a proxy that sets it correctly in front, e.g. werkzeug's
  ``ProxyFix``);
* ``POST /v1/games/{id}/moves``: per bearer token, keyed by a hash of the token (the
  raw token never reaches the limiter's storage); requests without a token by IP.

Counters live in the service's Redis (``REDIS_URL``), so every worker and instance
shares them; with the embedded store they are kept in process memory.  While the
limiter's storage is unreachable the limits fall back to process memory and the
request goes on (it then answers 503 from the game store if Redis is really down,
never 500).  ``RATE_LIMITS=false`` turns all of this off.
"""

from __future__ import annotations

import hashlib
import math
import time

from flask import Flask, Response, request
from flask_limiter import Limiter, RateLimitExceeded

from service.api.problems import problem
from service.config import Config

KEY_PREFIX = "t13rl"
STORAGE_SOCKET_TIMEOUT_SECONDS = 2.0

# endpoint -> (attribute of Config holding the rate, how the client is identified)
LIMITED_ENDPOINTS: dict[str, tuple[str, str]] = {
    "games.Games": ("rate_limit_create", "ip"),
    "games.Players": ("rate_limit_join", "ip"),
    "games.Moves": ("rate_limit_moves", "token"),
}


def client_ip() -> str:
    return f"ip:{request.remote_addr or 'unknown'}"


def client_token() -> str:
    """The hash of the request's bearer token (its IP without one); never the token."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return client_ip()
    return "tok:" + hashlib.sha256(token.encode()).hexdigest()[:32]


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
    options: dict[str, float] = {}
    if config.redis_url is not None:
        options = {
            "socket_timeout": STORAGE_SOCKET_TIMEOUT_SECONDS,
            "socket_connect_timeout": STORAGE_SOCKET_TIMEOUT_SECONDS,
        }
    limiter = Limiter(
        key_func=client_ip,
        storage_uri=storage_uri(config),
        storage_options=options,  # type: ignore[arg-type]
        strategy="fixed-window",
        key_prefix=KEY_PREFIX,
        swallow_errors=True,
        in_memory_fallback_enabled=True,
        headers_enabled=False,
    )
    limiter.init_app(app)
    key_funcs = {"ip": client_ip, "token": client_token}
    for endpoint, (setting, keyed_by) in LIMITED_ENDPOINTS.items():
        view = app.view_functions[endpoint]
        app.view_functions[endpoint] = limiter.limit(
            getattr(config, setting), key_func=key_funcs[keyed_by], methods=["POST"]
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
