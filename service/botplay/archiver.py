"""The archiver: takes the finished games of every hash slot and archives them.

It runs beside the bot worker, in the same process (:class:`~service.botplay.worker.BotWorker`
starts and stops it: ``three-thirteen-bots``, or a thread of the server under
``make run``), and finds its work as the bot worker does (:mod:`service.workers.slot_worker`):

* **Hints.** The write that finishes a game publishes ``"<slot> <ms>"`` on
  :data:`~service.store.keys.ARCHIVE_HINT`; the slot is ready at once.
* **Timers.** A claim answers the slot's earliest entry left -- another worker's claim,
  whose lease ends when that worker dies -- and the archiver looks again then.
* **Sweeps.** Every :data:`SWEEP_SECONDS` (``BOT_SWEEP_SECONDS`` if longer), and on each
  subscription, every slot's earliest entry is read (:meth:`FinishedGames.earliest`):
  an archive is not urgent, so what a hint missed may wait that long, and the sweeps
  cost a fraction of the bot worker's.

A claim (:meth:`FinishedGames.claim`) is a lease of ``BOT_CLAIM_SECONDS``: the game's
archive and its players' histories are written (:func:`~service.hosting.archiving.archive_game`),
then the entry is removed.  A worker that dies anywhere in between leaves the entry,
taken over when the lease ends; the step written again changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from service.config import Config
from service.hosting.archiving import archive_game
from service.store import GameStore
from service.store.archives import FinishedGames
from service.workers.slot_worker import SlotWorker, now_ms

log = logging.getLogger(__name__)

CONCURRENCY = 2
"""Games archived at once (threads: an archive is a few round trips and a compression)."""


SWEEP_SECONDS = 30.0
"""How often the archiver sweeps every slot at least."""


class ArchiveWorker(SlotWorker):
    """Archives the finished games of a store (see the module's docstring)."""

    def __init__(self, store: GameStore, config: Config, *, sweeps: bool = True) -> None:
        super().__init__(
            "archiver",
            concurrency=CONCURRENCY,
            sweeps=sweeps,
            sweep_seconds=max(config.bot_sweep_seconds, SWEEP_SECONDS),
        )
        self._store = store
        self._config = config
        self._finished = FinishedGames(store.client)
        self._working = 0
        self.archived = 0
        """Games archived (or found gone), for tests and logs."""

    def _hints(self) -> Any:
        return self._finished.hints()

    def _on_hint(self, data: Any) -> None:
        slot, at_ms = data.split()
        with self._changed:
            self._schedule(int(slot), int(at_ms))

    def _schedule(self, slot: int, at_ms: int) -> None:
        """Look at ``slot`` at ``at_ms`` (at once when it has passed).  Called holding
        the lock."""
        if at_ms <= now_ms():
            self._ready.add(slot)
            self._changed.notify_all()
        else:
            self._set_timer(slot, at_ms)

    def _sweep(self) -> None:
        for slot, at_ms in self._finished.earliest():
            with self._changed:
                self._schedule(slot, at_ms)

    def _step(self) -> None:
        with self._changed:
            self._ready.update(self._due_timers())
        self._claim()
        with self._changed:
            if self._stop.is_set():
                return
            if self._ready and self._working < CONCURRENCY:
                return
            self._wait()

    def _claim(self) -> None:
        lease_ms = int(self._config.bot_claim_seconds * 1000)
        while not self._stop.is_set():
            with self._changed:
                free = CONCURRENCY - self._working
                if free <= 0 or not self._ready:
                    return
                slot = self._ready.pop()
            at = now_ms()
            games, next_ms = self._finished.claim(slot, at, lease_ms, free)
            with self._changed:
                self._working += len(games)
                if next_ms is not None:
                    self._schedule(slot, next_ms)
            for game_id in games:
                self._pool.submit(self._archive, game_id, at + lease_ms)

    def _archive(self, game_id: str, claimed_until_ms: int) -> None:
        """Archive one claimed game, then remove its entry; a failure keeps the claim
        until its lease ends (then it is tried again)."""
        try:
            if archive_game(self._store, self._config, game_id) is None:
                log.warning("archiver: game %s is gone or not finished: not archived", game_id)
            self._finished.done(game_id, claimed_until_ms)
        except Exception:
            log.exception("archiver: could not archive game %s", game_id)
        finally:
            with self._changed:
                self._working -= 1
                self.archived += 1
                self._changed.notify_all()
