"""Prometheus metrics: requests, latencies, moves, games, errors and followers.

Labels are route templates (``/v1/games/<string:game_id>``), never raw paths,
so no game id, token or card ever becomes a label.  In ``AUTH_MODE=apps`` the
requests, moves and games are labelled by ``app`` too: the id of the app the
request was let in for (its key, a player's token, or a seat of one of its
games), :data:`NO_APP` otherwise (open mode, or a request refused before its
credential was accepted): as many values as the operator made apps, never a
player's id.  The latency histogram is not (its buckets times the apps).  Under gunicorn with
several workers, set ``PROMETHEUS_MULTIPROC_DIR`` to a writable directory
(deploy/gunicorn.conf.py empties it at start) and the metrics of all workers
are aggregated.

A client following a game's events (a long poll that waits, an SSE or NDJSON
stream) is counted in ``t13_event_followers`` while it waits and timed in
``t13_event_follow_seconds`` when it is done, not in the request-latency
histogram, whose tail it would otherwise be (:func:`follow_began`).
"""

from __future__ import annotations

import os
import time
from typing import Any

from flask import Flask, Response, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

REQUESTS = Counter(
    "t13_http_requests_total", "HTTP requests answered", ["method", "route", "status", "app"]
)
LATENCY = Histogram(
    "t13_http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
ERRORS = Counter("t13_http_errors_total", "Error answers by problem code", ["code"])
MOVES = Counter("t13_moves_total", "Moves accepted from clients", ["type", "app"])
GAMES_CREATED = Counter("t13_games_created_total", "Games created", ["app"])
GAMES_FINISHED = Counter("t13_games_finished_total", "Games finished by a client's move", ["app"])
GAMES_ABORTED = Counter("t13_games_aborted_total", "Games aborted by their app", ["app"])
FOLLOWERS = Gauge(
    "t13_event_followers",
    "Clients waiting for a game's events: long polls and open streams",
    ["kind"],
    multiprocess_mode="livesum",
)
FOLLOW_SECONDS = Histogram(
    "t13_event_follow_seconds",
    "How long a client followed a game's events: a long poll's wait, a stream's life",
    ["kind"],
    buckets=(0.1, 0.5, 1, 5, 15, 30, 60, 300, 900, 3600, 14400),
)
FOLLOWER_KINDS = {
    "application/json": "long_poll",
    "text/event-stream": "sse",
    "application/x-ndjson": "ndjson",
}

FOLLOWING_KEY = "t13.following"
"""Set in a request's WSGI environ once it waits for events (:func:`follow_began`):
the middleware then leaves it out of the latency histogram."""

APP_KEY = "t13.app"
"""Where a request's app is kept in its WSGI environ once its credential was let in
(set by :func:`label_app`), for the ``app`` label."""

NO_APP = "none"
"""The ``app`` label of a request of no app (open mode, or refused first)."""

ROUTE_KEY = "t13.route"
"""Where a request's route template is kept in its WSGI environ (set by
:func:`install`'s hook, read by the middleware when it counts the request)."""


METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Methods counted under their own name; any other is counted as ``OTHER`` (a
client must not be able to mint label values)."""

_children: dict[tuple[str, str, str, str], tuple[Any, Any]] = {}
_move_children: dict[tuple[str, str], Any] = {}


def label_app(environ: dict[str, Any], app: str) -> None:
    """Label the request of ``environ`` with ``app`` (an app whose credential or
    game it was let in for: never a value a client may make up)."""
    environ[APP_KEY] = app


def app_of(environ: dict[str, Any]) -> str:
    """The ``app`` label of the request of ``environ``."""
    return str(environ.get(APP_KEY, NO_APP))


def observe(
    method: str, route: str, status: str, seconds: float, timed: bool = True, app: str = NO_APP
) -> None:
    """Count one answered request (called by the WSGI middleware), and time it
    unless it is not ``timed`` (a follower's, timed by :func:`follow_ended`).

    The labelled children are looked up once per (method, route, status): routes
    are templates and statuses a few, so the memo stays small."""
    key = (method if method in METHODS else "OTHER", route, status, app)
    children = _children.get(key)
    if children is None:
        children = (LATENCY.labels(key[0], route), REQUESTS.labels(*key))
        _children[key] = children
    if timed:
        children[0].observe(seconds)
    children[1].inc()


def follow_began(environ: dict[str, Any], media: str) -> float:
    """A client of ``environ``'s request begins following a game's events as
    ``media`` (a long poll or a stream): counted in the followers gauge until
    :func:`follow_ended`, given what this returns (when it began)."""
    kind = FOLLOWER_KINDS[media]
    environ[FOLLOWING_KEY] = kind
    FOLLOWERS.labels(kind).inc()
    return time.perf_counter()


def follow_ended(media: str, began: float) -> None:
    """The follower of :func:`follow_began` stopped: uncounted, and timed in its histogram."""
    kind = FOLLOWER_KINDS[media]
    FOLLOWERS.labels(kind).dec()
    FOLLOW_SECONDS.labels(kind).observe(time.perf_counter() - began)


def count_move(move_type: str, app: str = NO_APP) -> None:
    """Count one move accepted from a client (its labelled child looked up once
    per move type and app, as :func:`observe` does: ``labels()`` costs more than
    ``inc()``)."""
    key = (move_type, app)
    child = _move_children.get(key)
    if child is None:
        child = _move_children[key] = MOVES.labels(move_type, app)
    child.inc()


def install(app: Flask) -> None:
    """Label each request with its route template (not its path) for the metrics."""

    @app.before_request
    def _route() -> None:
        rule = request.url_rule
        if rule is not None:
            request.environ[ROUTE_KEY] = rule.rule


def exposition() -> Response:
    """The text exposition of every metric (all workers in multiprocess mode)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        payload = generate_latest(registry)
    else:
        payload = generate_latest()
    return Response(payload, mimetype=CONTENT_TYPE_LATEST)
