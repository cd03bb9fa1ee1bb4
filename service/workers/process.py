"""A worker as a process of its own: its configuration, its signals, its stop."""

from __future__ import annotations

import logging
import os
import signal
import sys
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server

from service import logs
from service.config import Config
from service.workers.slot_worker import SlotWorker


def worker_config(argv: list[str] | None, usage: str, log: logging.Logger) -> Config | None:
    """The configuration of a worker's process from the environment, its logging set
    up; None (having said why) when it cannot run: arguments given (it takes none), or
    no ``REDIS_URL`` (the embedded store lives in the server's process, which runs the
    workers itself)."""
    if argv if argv is not None else sys.argv[1:]:
        print(usage.strip(), file=sys.stderr)
        return None
    config = Config.from_env()
    logs.configure(config.log_level)
    # a worker's metrics are its own (served by :func:`serve`), but with this set
    # (a shared environment: the server's setting) prometheus_client keeps every
    # value in a file there, and fails where it is missing
    multiprocess_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "").strip()
    if multiprocess_dir:
        os.makedirs(multiprocess_dir, exist_ok=True)
    if config.embedded_store:
        log.error(
            "set REDIS_URL: without it the store is embedded in the server's process "
            "(`make run` runs the workers there)"
        )
        return None
    return config


def serve(
    worker: SlotWorker,
    name: str,
    log: logging.Logger,
    started: str = "",
    *,
    metrics: tuple[CollectorRegistry, str, int] | None = None,
) -> int:
    """Run ``worker`` in this process until SIGTERM or SIGINT, then let the work under
    way finish; the exit status (0).  ``name`` says which worker in the log lines,
    ``started`` what the start line adds; ``metrics`` a registry to serve on
    ``/metrics`` at an address and port (a port of 0: not served)."""
    if metrics is not None and metrics[2]:
        registry, host, port = metrics
        start_http_server(port, addr=host, registry=registry)
        started += f", metrics on {host}:{port}"

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("%s stopping (signal %d)", name, signum)
        worker.request_stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log.info("%s started%s", name, started)
    worker.run()
    worker.stop(wait=True)
    return 0
