"""The archiver: takes the finished games of every hash slot and archives them.

It runs beside the bot worker, in the same process (:class:`~service.botplay.worker.BotWorker`
starts and stops it: ``three-thirteen-bots``, or a thread of the server under
``make run``), and finds its work as the bot worker does
(:class:`~service.workers.claiming_worker.ClaimingWorker`):

* **Hints.** The write that finishes a game publishes ``"<slot> <ms>"`` on
  :data:`~service.store.keys.ARCHIVE_HINT`; the slot is ready at once.
* **Timers.** A claim answers the slot's earliest entry left -- another worker's claim,
  whose lease ends when that worker dies -- and the archiver looks again then.
* **Sweeps.** Every :data:`SWEEP_SECONDS` (``BOT_SWEEP_SECONDS`` if longer), and on each
  subscription, every slot's earliest entry is read: an archive is not urgent, so what
  a hint missed may wait that long, and the sweeps cost a fraction of the bot worker's.

A claim is a lease of ``BOT_CLAIM_SECONDS``: the game's archive and its players'
histories are written (:func:`~service.hosting.archiving.archive_game`), then the entry
is removed.  A worker that dies anywhere in between leaves the entry,
taken over when the lease ends; the step written again changes nothing.
"""

from __future__ import annotations

import logging

from service.config import Config
from service.hosting.archiving import archive_game
from service.store import GameStore
from service.store.archives import FinishedGames
from service.workers.claiming_worker import ClaimingWorker

log = logging.getLogger(__name__)

CONCURRENCY = 2
"""Games archived at once (threads: an archive is a few round trips and a compression)."""


SWEEP_SECONDS = 30.0
"""How often the archiver sweeps every slot at least."""


class ArchiveWorker(ClaimingWorker):
    """Archives the finished games of a store (see the module's docstring)."""

    def __init__(self, store: GameStore, config: Config, *, sweeps: bool = True) -> None:
        self._finished = FinishedGames(store.client)
        super().__init__(
            "archiver",
            self._finished,
            concurrency=CONCURRENCY,
            lease_seconds=config.bot_claim_seconds,
            sweeps=sweeps,
            sweep_seconds=max(config.bot_sweep_seconds, SWEEP_SECONDS),
        )
        self._store = store
        self._config = config

    def _work(self, game_id: str, claimed_until_ms: int) -> None:
        """Archive one claimed game, then remove its entry; a failure keeps the claim
        until its lease ends (then it is tried again)."""
        try:
            if archive_game(self._store, self._config, game_id) is None:
                log.warning("archiver: game %s is gone or not finished: not archived", game_id)
            self._finished.done(game_id, claimed_until_ms)
        except Exception:
            log.exception("archiver: could not archive game %s", game_id)
