"""Prometheus metrics: requests, latencies, moves, games and errors.

Labels are route templates (``/v1/games/<string:game_id>``), never raw paths,
so no game id, token or card ever becomes a label.  Under gunicorn with
several workers, set ``PROMETHEUS_MULTIPROC_DIR`` to a writable, emptied
directory and the metrics of all workers are aggregated.
"""

from __future__ import annotations

import os
import time

from flask import Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

REQUESTS = Counter(
    "t13_http_requests_total", "HTTP requests answered", ["method", "route", "status"]
)
LATENCY = Histogram(
    "t13_http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
ERRORS = Counter("t13_http_errors_total", "Error answers by problem code", ["code"])
MOVES = Counter("t13_moves_total", "Moves accepted from clients", ["type"])
GAMES_CREATED = Counter("t13_games_created_total", "Games created")
GAMES_FINISHED = Counter("t13_games_finished_total", "Games finished by a client's move")


def _route() -> str:
    rule = request.url_rule
    return rule.rule if rule is not None else "<unmatched>"


def install(app: Flask) -> None:
    """Time every request and count it by route and status."""

    @app.before_request
    def _start() -> None:
        g.t13_started = time.perf_counter()

    @app.after_request
    def _observe(response: Response) -> Response:
        started = g.pop("t13_started", None)
        route = _route()
        if started is not None:
            LATENCY.labels(request.method, route).observe(time.perf_counter() - started)
        REQUESTS.labels(request.method, route, str(response.status_code)).inc()
        if response.status_code >= 400 and response.mimetype == "application/problem+json":
            code = (response.get_json(silent=True) or {}).get("code", "UNKNOWN")
            ERRORS.labels(code).inc()
        return response


def exposition() -> Response:
    """The text exposition of every metric (all workers in multiprocess mode)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        payload = generate_latest(registry)
    else:
        payload = generate_latest()
    return Response(payload, mimetype=CONTENT_TYPE_LATEST)
