"""Gunicorn settings, all from the environment via :class:`service.config.Config`.

    gunicorn -c deploy/gunicorn.conf.py service.wsgi:app

HOST/PORT, WEB_CONCURRENCY, GUNICORN_WORKER_CONNECTIONS, GUNICORN_TIMEOUT,
BODY_TIMEOUT_SECONDS and LOG_LEVEL apply.  Workers are gevent workers
(:class:`service.serving.Worker`): every connection is a greenlet, so a long
poll or a slow client holds a little memory, not a thread, and hundreds of
them do not stall the others.  A request's headers must arrive within
``keepalive`` seconds, its body within BODY_TIMEOUT_SECONDS (408 beyond); what
gunicorn answers itself (400, 414, 431...) is problem+json.  CPU-bound work
(a hand evaluation) runs on the worker's one loop: it is bounded elsewhere,
and WEB_CONCURRENCY workers share the CPUs.  Access logs are one JSON object
per line on stdout (no Authorization header, no request body; the request id
the app answered with); gunicorn's own log lines are JSON on stderr, like the
app's.  Without REDIS_URL the store is embedded in the process, so exactly one
worker runs: several would each see different games.

With PROMETHEUS_MULTIPROC_DIR set, every worker writes its metrics there and
``/metrics`` adds them up: the master empties the directory when it starts and
drops a dead worker's live gauges (:func:`child_exit`).

Graceful stop: on SIGTERM a worker stops accepting, lets in-flight requests
finish and, through :func:`service.store.request_shutdown`, makes its long polls
answer (with no events) and its event streams end at once, so it exits well inside
``graceful_timeout``.

Nothing here imports the app or the store: gevent patches the standard library
(sockets, locks, ``time.sleep``) when a worker starts, and every module that
makes a lock or a socket must be imported after that, in the worker.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from gunicorn.glogging import Logger

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `service` without install

from service.config import Config  # noqa: E402
from service.logs import JsonFormatter, access_line  # noqa: E402

_config = Config.from_env()

bind = f"{_config.host}:{_config.port}"
worker_class = "service.serving.Worker"
workers = _config.web_concurrency
worker_connections = _config.gunicorn_worker_connections
timeout = _config.gunicorn_timeout
# Let in-flight long polls finish on a graceful stop / reload.
graceful_timeout = _config.long_poll_max_seconds + 5
# Also the time a request's line and headers have to arrive (the gevent worker
# reads them under this timeout), on a new connection as on a kept-alive one.
keepalive = 5
# Workers are not recycled after a number of requests: a recycled worker would
# end every event stream it holds (their clients reconnect, all at once).
max_requests = 0
# Each worker imports the app itself, after gevent has patched the standard
# library: preloading it in the master would make its module-level locks (the
# metrics', the store's) and imports of ssl/socket before the patch, which
# gevent warns about and which can deadlock greenlets on a real lock.  The cost
# is the import per worker start (about 0.3 s of CPU),
# and memory no longer shared between workers.
preload_app = False
loglevel = _config.log_level.lower()
accesslog = "-"
errorlog = "-"
limit_request_line = 8190
limit_request_fields = 100
control_socket_disable = True  # unused; would clash between instances sharing $HOME


def _raise_open_files_limit(connections: int) -> None:
    """Let a worker hold its connections and as many to Redis (soft limit up to the hard one)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * connections + 256
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


_raise_open_files_limit(worker_connections)

_forced_single_worker = ""
if _config.embedded_store and workers != 1:
    _forced_single_worker = (
        f"REDIS_URL is not set: running 1 worker instead of {workers}, because the embedded "
        "store lives inside one process and several workers would not share games"
    )
    workers = 1


class JsonAccessLogger(Logger):
    """gunicorn's logger writing :func:`service.logs.access_line`'s typed JSON lines."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for handler in self.error_log.handlers:
            if getattr(handler, "_gunicorn", False):
                handler.setFormatter(JsonFormatter())

    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> None:
        if not self.access_log_enabled:
            return
        try:
            line = access_line(
                environ,
                resp.status_code,
                getattr(resp, "sent", None),
                resp.headers,
                request_time.total_seconds(),
                time.time(),
            )
            self.access_log.info(line)
        except Exception:
            self.error(traceback.format_exc())


logger_class = JsonAccessLogger


def _metrics_dir() -> Path | None:
    value = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "").strip()
    return Path(value) if value else None


def _empty_metrics_dir(path: Path) -> None:
    """Create the workers' metrics directory and drop what an earlier run left
    there (a restarted container keeps its ``emptyDir``): the counters of workers
    long gone would otherwise be added to this run's."""
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink()


def child_exit(server: Any, worker: Any) -> None:
    """A worker that exited no longer counts in the live gauges (the followers).

    What ``prometheus_client.multiprocess.mark_process_dead`` does, without
    importing prometheus_client into the master (see the module docstring): its
    counters and histograms stay, summed with the other workers'."""
    path = _metrics_dir()
    if path is not None:
        for live in path.glob(f"gauge_live*_{worker.pid}.db"):
            live.unlink(missing_ok=True)


def on_starting(server: Any) -> None:
    """Prepare the metrics directory; log the effective settings once, when the master starts."""
    metrics_dir = _metrics_dir()
    if metrics_dir is not None:
        _empty_metrics_dir(metrics_dir)
    if _forced_single_worker:
        server.log.warning(_forced_single_worker)
    from service.redact import redact_url  # not service.store: see the docstring

    if _config.embedded_store:
        store = "embedded (not for production)"
    elif _config.redis_sentinels:
        sentinels = ",".join(f"{host}:{port}" for host, port in _config.redis_sentinels)
        store = f"the primary {_config.redis_sentinel_master!r} of Redis Sentinels {sentinels}"
    else:
        kind = "Redis Cluster at " if _config.redis_cluster else "Redis at "
        store = kind + redact_url(_config.redis_url)
    if _config.durable_writes:
        store += (
            f"; changes acknowledged once confirmed by {_config.redis_wait_replicas} "
            f"replica(s){' and the AOF' if _config.redis_wait_aof else ''}"
        )
    server.log.info(
        "serving on %s with %d gevent worker(s) x %d connection(s); metrics: %s; store: %s",
        bind,
        workers,
        worker_connections,
        f"all workers' (from {metrics_dir})" if metrics_dir else "each worker its own",
        store,
    )


def post_worker_init(worker: Any) -> None:
    """Chain a store shutdown onto the worker's SIGTERM (graceful stop) handler.

    gunicorn installs ``worker.handle_exit`` for SIGTERM before this hook runs
    (``worker_int`` only covers SIGINT/SIGQUIT).  Ours first sets the store's
    shutdown flag, so long polls end within a second, then lets the worker stop
    accepting and drain in-flight requests as usual.  The shutdown runs on a
    greenlet of its own: a signal handler must not block, and waking the
    waiters takes their lock.
    """
    import gevent

    from service.store import request_shutdown

    handle_exit = worker.handle_exit

    def _on_sigterm(sig: int, frame: Any) -> None:
        gevent.spawn(request_shutdown)
        handle_exit(sig, frame)

    signal.signal(signal.SIGTERM, _on_sigterm)
    # signal.signal() makes the signal interrupt system calls again; gunicorn wants it not to.
    signal.siginterrupt(signal.SIGTERM, False)


def worker_int(worker: Any) -> None:
    """SIGINT/SIGQUIT (quick stop): release long polls too."""
    import gevent

    from service.store import request_shutdown

    gevent.spawn(request_shutdown)
