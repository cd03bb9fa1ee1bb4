"""``three-thirteen-bots``: a bot worker, as a process of its own.

Reads the same environment as the server (``REDIS_URL``, ``REDIS_CLUSTER``, the
``BOT_*`` settings; docs/CONFIGURATION.md).  Plays every turn that falls due: bots'
turns and the seats on autopilot, and the automatic moves of turn timers run out.
Run as many as the bots' CPU needs (bots are CPU work: scale by processes); they
share the work through the due games' claims.  SIGTERM or SIGINT: no new games are
claimed, the plays under way finish (a stretch of bot moves takes under a second),
and the worker exits; a worker killed outright leaves its claims, which other workers
take over after ``BOT_CLAIM_SECONDS``.
"""

from __future__ import annotations

import dataclasses
import logging
import signal
import sys
from typing import Any

from service import logs
from service.botplay.worker import BotWorker
from service.bots import expert
from service.config import Config
from service.engine import byte_cache
from service.hosting import bot_turns
from service.store import GameStore

log = logging.getLogger("service.botplay")  # not "__main__": the service's logs are "service.*"


def main(argv: list[str] | None = None) -> int:
    if argv if argv is not None else sys.argv[1:]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    config = Config.from_env()
    logs.configure(config.log_level)
    bot_turns.configure(config)
    if config.embedded_store:
        log.error(
            "set REDIS_URL: without it the store is embedded in the server's process "
            "(`make run` runs a bot worker there)"
        )
        return 2
    # a connection for each playing thread, one for the hints, one for the sweeps
    config = dataclasses.replace(config, redis_max_connections=config.bot_concurrency + 2)
    worker = BotWorker(GameStore.from_config(config), config)

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("bot worker stopping (signal %d)", signum)
        worker.request_stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log.info(
        "bot worker started (solver %s, expert samples %d, memos %d MB)",
        config.solver,
        expert.samples(),
        byte_cache.budget() >> 20,
    )
    worker.run()
    worker.stop(wait=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
