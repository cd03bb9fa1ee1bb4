"""Gunicorn settings, all from the environment via :class:`service.config.Config`.

    gunicorn -c deploy/gunicorn.conf.py service.wsgi:app

HOST/PORT, WEB_CONCURRENCY, GUNICORN_THREADS, GUNICORN_TIMEOUT and LOG_LEVEL
apply.  Workers are threaded (gthread) so a long poll holds a thread, not a
process.  Access logs are one JSON object per line on stdout (no Authorization
header, no request body; the request id the app answered with); gunicorn's own
log lines are JSON on stderr, like the app's.  Without REDIS_URL the store is
embedded in the process, so exactly one worker runs: several would each see
different games.

Graceful stop: on SIGTERM a worker stops accepting, lets in-flight requests
finish and, through :func:`service.store.request_shutdown`, makes its long polls
answer (with no events) within about a second, so it exits well inside
``graceful_timeout``.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

from gunicorn.glogging import Logger, SafeAtoms

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `service` without install

from service.config import Config  # noqa: E402
from service.logs import JsonFormatter  # noqa: E402
from service.store import redact_url, request_shutdown  # noqa: E402

_config = Config.from_env()

bind = f"{_config.host}:{_config.port}"
worker_class = "gthread"
workers = _config.web_concurrency
threads = _config.gunicorn_threads
timeout = _config.gunicorn_timeout
# Let in-flight long polls finish on a graceful stop / reload.
graceful_timeout = _config.long_poll_max_seconds + 5
keepalive = 5
max_requests = 10000
# Import the app once, in the master: a worker (re)started after max_requests is
# a fork, not a fresh import of Flask, the engine and the spec (about 0.3 s of
# CPU each time), and workers share those pages.  Nothing opens a connection at
# import time (the store connects on first use, in the worker).  A HUP then
# restarts workers on the code already loaded; deploy new code with a restart.
preload_app = True
max_requests_jitter = 1000
loglevel = _config.log_level.lower()
accesslog = "-"
errorlog = "-"
limit_request_line = 8190
limit_request_fields = 100
control_socket_disable = True  # unused; would clash between instances sharing $HOME

_forced_single_worker = ""
if _config.embedded_store and workers != 1:
    _forced_single_worker = (
        f"REDIS_URL is not set: running 1 worker instead of {workers}, because the embedded "
        "store lives inside one process and several workers would not share games"
    )
    workers = 1
if _config.embedded_store:
    # The embedded store lives in the worker: recycling it would drop every game.
    max_requests = 0

access_log_format = json.dumps(
    {
        "time": "%(t)s",
        "remote": "%(h)s",
        "method": "%(m)s",
        "path": "%(U)s",
        "query": "%(q)s",
        "status": "%(s)s",
        "bytes": "%(b)s",
        "duration_ms": "%(M)s",
        "user_agent": "%(a)s",
        "request_id": "%({x-request-id}o)s",
        "pid": "%(p)s",
    }
)


class _JsonAtoms(SafeAtoms):
    """Atoms escaped for a JSON string (gunicorn only escapes double quotes).

    Escaped when the format reads them, not up front: gunicorn's atoms hold
    every environ entry and header, and turning each into a string (the
    app's per-request objects and sockets included) cost more than the rest
    of the log line, on every request."""

    def __init__(self, atoms: dict[str, object]) -> None:
        dict.__init__(self, atoms)

    def __getitem__(self, name: str) -> str:
        value = super().__getitem__(name)  # case-insensitive {header}i, "-" when absent
        return json.dumps(str(value))[1:-1] if value is not None else "-"


class JsonAccessLogger(Logger):
    """gunicorn's logger with access-log atoms that keep every line valid JSON."""

    atoms_wrapper_class = _JsonAtoms

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for handler in self.error_log.handlers:
            if getattr(handler, "_gunicorn", False):
                handler.setFormatter(JsonFormatter())


logger_class = JsonAccessLogger


def on_starting(server: Any) -> None:
    """Log the effective settings once, when the master starts."""
    if _forced_single_worker:
        server.log.warning(_forced_single_worker)
    server.log.info(
        "serving on %s with %d worker(s) x %d thread(s); store: %s",
        bind,
        workers,
        threads,
        "embedded (not for production)"
        if _config.embedded_store
        else ("Redis Cluster at " if _config.redis_cluster else "Redis at ")
        + redact_url(_config.redis_url),
    )


def post_worker_init(worker: Any) -> None:
    """Chain a store shutdown onto the worker's SIGTERM (graceful stop) handler.

    gunicorn installs ``worker.handle_exit`` for SIGTERM before this hook runs
    (``worker_int`` only covers SIGINT/SIGQUIT).  Ours first sets the store's
    shutdown flag, so long polls end within a second, then lets gthread stop
    accepting and drain in-flight requests as usual.
    """
    handle_exit = worker.handle_exit

    def _on_sigterm(sig: int, frame: Any) -> None:
        request_shutdown()
        handle_exit(sig, frame)

    signal.signal(signal.SIGTERM, _on_sigterm)
    # signal.signal() makes the signal interrupt system calls again; gunicorn wants it not to.
    signal.siginterrupt(signal.SIGTERM, False)


def worker_int(worker: Any) -> None:
    """SIGINT/SIGQUIT (quick stop): release long polls too."""
    request_shutdown()
