"""``three-thirteen-webhooks``: a delivery worker, as a process of its own.

Reads the same environment as the server (``REDIS_URL``, ``REDIS_CLUSTER``, the
``WEBHOOK_*`` settings; docs/CONFIGURATION.md).  Run as many as the deliveries need:
they share the work through the outboxes' consumer groups.  SIGTERM or SIGINT: no new
deliveries are taken, the attempts under way finish, and the worker exits; a
delivery it had taken but not sent is taken over by another worker after
``WEBHOOK_CLAIM_SECONDS``. The stop is bounded: each attempt under way ends
within ``WEBHOOK_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

import dataclasses
import logging
import signal
import sys
from typing import Any

from service import logs
from service.config import Config
from service.store import connect
from service.webhooks.worker import DeliveryWorker

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    if argv if argv is not None else sys.argv[1:]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    config = Config.from_env()
    logs.configure(config.log_level)
    if config.embedded_store:
        log.error(
            "set REDIS_URL: without it the store is embedded in the server's process "
            "(`make run` runs a delivery worker there)"
        )
        return 2
    # a connection for each delivery thread's settling, one for the hints, one for reads
    config = dataclasses.replace(config, redis_max_connections=config.webhook_concurrency + 2)
    worker = DeliveryWorker(connect(config), config)

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("webhook worker %s stopping (signal %d)", worker.name, signum)
        worker.request_stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log.info("webhook worker %s started", worker.name)
    worker.run()
    worker.stop(wait=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
