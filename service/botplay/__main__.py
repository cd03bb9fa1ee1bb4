"""``three-thirteen-bots``: a bot worker, as a process of its own.

Reads the same environment as the server (``REDIS_URL``, ``REDIS_CLUSTER``, the
``BOT_*`` settings; docs/CONFIGURATION.md).  Plays every turn that falls due: bots'
turns and the seats on autopilot, and the automatic moves of turn timers run out.
Run as many as the bots' CPU needs (bots are CPU work: scale by processes); they
share the work through the due games' claims.  SIGTERM or SIGINT: no new games are
claimed, the plays under way finish (a stretch of bot moves takes under a second),
and the worker exits; a worker killed outright leaves its claims, which other workers
take over after ``BOT_CLAIM_SECONDS``.  Beside the bot worker, the archiver of finished
games (:mod:`service.botplay.archiver`) runs in the same process.
"""

from __future__ import annotations

import dataclasses
import logging
import sys

from service.botplay import archiver
from service.botplay.worker import BotWorker
from service.bots import expert
from service.engine import byte_cache
from service.hosting import bot_turns
from service.store import GameStore
from service.workers.process import serve, worker_config

log = logging.getLogger("service.botplay")  # not "__main__": the service's logs are "service.*"


def main(argv: list[str] | None = None) -> int:
    config = worker_config(argv, __doc__ or "", log)
    if config is None:
        return 2
    bot_turns.configure(config)
    # a connection for each playing and archiving thread, and for each worker's hints
    # and sweeps (the archiver's beside the bot worker's)
    connections = config.bot_concurrency + archiver.CONCURRENCY + 4
    config = dataclasses.replace(config, redis_max_connections=connections)
    worker = BotWorker(GameStore.from_config(config), config)
    started = (
        f" (solver {config.solver}, expert samples {expert.samples()},"
        f" memos {byte_cache.budget() >> 20} MB)"
    )
    metrics = (worker.metrics.registry, config.host, config.worker_metrics_port)
    return serve(worker, "bot worker", log, started, metrics=metrics)


if __name__ == "__main__":
    sys.exit(main())
