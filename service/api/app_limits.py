"""Whom a limited request counts against, on either path (Flask's hook, the fast lane).

In open mode, and in ``AUTH_MODE=apps`` for a seat's token, no credential or one
refused: its client, as declared by the route table (its address, or its token:
:mod:`service.api.limits`); a refused credential also counts against its address
(``RATE_LIMIT_AUTH_FAILURES``: :func:`service.api.auth.refusal`).

In apps mode, a request with an app's key or a player's credential counts against
its app and its player instead, with the limits the operator set per app
(:data:`~service.hosting.apps.LIMITS`, defaulting to ``APP_*``), counted like every
other limit (:class:`~service.api.limits.RateLimiter`, a fixed window of a minute
in the shared Redis, so exact across instances):

* the app's totals, its backend's and its players' requests together:
  ``creates_per_minute`` (``POST /v1/games``), ``moves_per_minute`` and
  ``listings_per_minute`` (``GET /v1/games``, ``GET /v1/app/games``);
* each player's moves, all its devices together: ``player_moves_per_minute`` (in
  place of ``RATE_LIMIT_MOVES``);
* every other limited endpoint's ``RATE_LIMIT_*``, counted per player for a
  player, per app for its backend (in place of its address: one backend speaks
  for many users), as are a player's creates and listings besides the app's totals.

Over one, the answer is 429 ``APP_LIMIT_EXCEEDED`` naming the limit and whose it
is (``"limit": "moves_per_minute", "scope": "player"``) with ``Retry-After``.
The concurrent games (``concurrent_games``) are counted where games are made
(:mod:`service.hosting.app_games`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from flask import Flask, request
from limits import RateLimitItemPerMinute

from service.api.auth import APP, PLAYER, Principal, bearer_token, principal
from service.api.context import Call, call
from service.api.limits import Limit, Limited, Per, Rate, RateLimits
from service.api.problems import ApiError
from service.hosting.apps import App

APP_TOTALS: dict[Rate, str] = {
    Rate.CREATE: "creates_per_minute",
    Rate.MOVES: "moves_per_minute",
    Rate.LIST: "listings_per_minute",
}
"""The rates an app's own limits count, for its backend and players together."""

PER_PLAYER: dict[Rate, str] = {Rate.MOVES: "player_moves_per_minute"}
"""The rates an app's own limits count for each of its players."""

_LIMITS: dict[tuple[str, int], Limit] = {}
_LOCK = threading.Lock()


def _limit(name: str, most: int) -> Limit:
    """The limit ``name`` at ``most`` a minute (made once per value)."""
    found = _LIMITS.get((name, most))
    if found is None:
        found = Limit(f"app-{name}", (RateLimitItemPerMinute(most),), name)
        with _LOCK:
            if len(_LIMITS) > 10_000:  # bounded: the operators' values
                _LIMITS.clear()
            _LIMITS[(name, most)] = found
    return found


def count(current: Call, limited: Limited) -> None:
    """Count ``current``, a request of an endpoint limited by ``limited``, against
    whom it is made by (see the module docstring); 429 over a limit, 401 for a
    credential refused."""
    limits = current.services.limits
    if limits is None:
        return
    directory = current.services.apps
    if directory is not None:
        found = principal(current)
        if found is not None and found.kind in (APP, PLAYER):
            assert found.app is not None
            app = directory.get(found.app)
            if app is not None:  # else refused by the access check, next
                _count_for_app(limits, current, limited.rate, app, found)
            return
    token = bearer_token(current) if limited.per is Per.TOKEN else None
    limits.count(limited.rate, limited.per, token, current.environ)


def _count_for_app(
    limits: RateLimits, current: Call, rate: Rate, app: App, found: Principal
) -> None:
    config = current.services.config
    app_client = f"app:{app.id}"
    if found.kind == PLAYER:
        player_client = f"player:{found.holder}"
        own = PER_PLAYER.get(rate)
        if own is not None:
            _check(limits, own, app.limit(own, config), player_client, "player")
        else:
            limits.limiter.check(limits.limits[rate], player_client)
    elif rate not in APP_TOTALS:
        limits.limiter.check(limits.limits[rate], app_client)
    total = APP_TOTALS.get(rate)
    if total is not None:
        _check(limits, total, app.limit(total, config), app_client, "app")


def _check(limits: RateLimits, name: str, most: int, client: str, scope: str) -> None:
    if most == 0:
        return
    refused = limits.limiter.refused(_limit(name, most), client)
    if refused is not None:
        _item, wait = refused
        whose = "this player" if scope == "player" else "this app"
        raise ApiError(
            "APP_LIMIT_EXCEEDED",
            f"app limit: {whose} may make {most} such requests a minute ({name}); "
            f"retry after {wait} s",
            headers={"Retry-After": str(wait)},
            limit=name,
            scope=scope,
        )


def install(app: Flask, counted: Mapping[tuple[str, str], Limited]) -> None:
    """Count the limited endpoints' requests before their views run on Flask's
    path: ``counted`` maps ``(endpoint, method)`` to its limit
    (:func:`service.api.routes.counted`).  Only these requests consult the
    limiter's storage (a dead storage would otherwise hold up any request)."""

    @app.before_request
    def _count() -> None:
        limited = counted.get((request.endpoint or "", request.method))
        if limited is not None:
            count(call(), limited)
