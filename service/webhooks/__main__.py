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
import sys

from service.store import connect
from service.webhooks.worker import DeliveryWorker
from service.workers.process import serve, worker_config

log = logging.getLogger("service.webhooks")  # not "__main__": the service's logs are "service.*"


def main(argv: list[str] | None = None) -> int:
    config = worker_config(argv, __doc__ or "", log)
    if config is None:
        return 2
    # a connection for each delivery thread's settling, one for the hints, one for reads
    config = dataclasses.replace(config, redis_max_connections=config.webhook_concurrency + 2)
    worker = DeliveryWorker(connect(config), config)
    return serve(worker, f"webhook worker {worker.name}", log)


if __name__ == "__main__":
    sys.exit(main())
