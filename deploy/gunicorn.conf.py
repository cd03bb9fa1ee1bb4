"""Gunicorn settings, all from the environment via :class:`service.config.Config`.

    gunicorn -c deploy/gunicorn.conf.py service.wsgi:app

HOST/PORT, WEB_CONCURRENCY, GUNICORN_THREADS, GUNICORN_TIMEOUT and LOG_LEVEL
apply.  Workers are threaded (gthread) so a long poll holds a thread, not a
process.  Access logs are one JSON object per line on stdout (no Authorization
header, no request body).  Without REDIS_URL the store is embedded in the
process, so exactly one worker runs: several would each see different games.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gunicorn.glogging import Logger, SafeAtoms

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `service` without install

from service.config import Config  # noqa: E402

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
        "request_id": "%({x-request-id}i)s",
        "pid": "%(p)s",
    }
)


class _JsonAtoms(SafeAtoms):
    """Atoms escaped for a JSON string (gunicorn only escapes double quotes)."""

    def __init__(self, atoms: dict[str, object]) -> None:
        dict.__init__(self)
        for name, value in atoms.items():
            self[name] = json.dumps(str(value))[1:-1] if value is not None else "-"


class JsonAccessLogger(Logger):
    """gunicorn's logger with access-log atoms that keep every line valid JSON."""

    atoms_wrapper_class = _JsonAtoms


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
        "embedded (not for production)" if _config.embedded_store else "Redis",
    )
