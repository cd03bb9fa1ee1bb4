"""The bot worker: finds games whose turn is due, claims them, plays them.

How it finds work across the due games of up to 16384 hash slots
(:mod:`service.store.due_games`):

* **Hints.** A write that leaves a turn due publishes ``"<slot> <due ms>"`` on
  :data:`~service.store.keys.BOT_HINT` in the same script; the worker's listener marks
  the slot ready when it is due now (a bot's turn), else sets a timer for it (a turn
  timer's deadline), so a turn is played within milliseconds of its due time.
* **Timers.** Each claim also answers the slot's next due time -- another game's, or
  a claim's lease (another worker's, which ends when that worker dies) -- and the
  worker looks at the slot again then: a dead worker's games are taken over when
  their lease ends.
* **Sweeps.** Every ``BOT_SWEEP_SECONDS``, and whenever the listener (re)subscribes,
  a thread looks at every slot's earliest due time in pipelined round trips (1024
  slots each) and sets the timers: what a hint missed (a worker started late, a
  dropped connection) is found then.  A sweep costs about 0.2 s of a worker's CPU,
  which is why hints and timers do the timely work and sweeps only catch up.

The main loop claims due games of the ready slots (:meth:`DueGames.claim`), no more
than it has free threads (``BOT_CONCURRENCY``), so a busy worker leaves the rest to
others.  A thread plays one claim: one stretch of bot moves or one overdue turn, a
write of its own (:func:`~service.hosting.due_turns.play_due`); the write makes the
game due again from what it left (at once, with bots left to play), behind the games
due before it.  So every game gets its turn, and none holds a thread for long.

A claim is a lease of ``BOT_CLAIM_SECONDS``: a worker that dies leaves its games due
again when it ends, and another worker takes them over.  A claim that wrote nothing is
given back; a play that failed keeps its claim until the lease ends (a retry then,
not a busy loop).  The worker runs the archiver of finished games beside it
(:mod:`service.botplay.archiver`), started and stopped with it.  SIGTERM
(:meth:`BotWorker.request_stop`): no new claims, the plays under way finish (a stretch
takes under a second), and the worker exits.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Self

from service.botplay.archiver import ArchiveWorker
from service.botplay.bot_metrics import BotMetrics
from service.config import Config
from service.hosting.due_turns import Played, play_due
from service.store import GameNotFound, GameStore
from service.store.due_games import DueGames
from service.store.keys import slot_of
from service.workers.slot_worker import SlotWorker, now_ms

log = logging.getLogger(__name__)


class BotWorker(SlotWorker):
    """Plays the due turns of the games in a store (see the module's docstring)."""

    def __init__(self, store: GameStore, config: Config, *, sweeps: bool = True) -> None:
        """``sweeps=False`` for a worker that lives in the only process using its store
        (the embedded one): no hint can be missed and no other worker can die there."""
        super().__init__(
            "bots",
            concurrency=config.bot_concurrency,
            sweeps=sweeps,
            sweep_seconds=config.bot_sweep_seconds,
        )
        self._store = store
        self._config = config
        self._due = DueGames(store.client)
        self._playing = 0
        self.plays = 0
        """Claims played (written or not), for tests and logs."""
        self.metrics = BotMetrics()
        self.archiver = ArchiveWorker(store, config, sweeps=sweeps)
        """The archiver of the finished games, started and stopped with this worker
        (:mod:`service.botplay.archiver`)."""

    # -- running, with the archiver beside ---------------------------------------------

    def start(self) -> Self:
        self.archiver.start()
        return super().start()

    def run(self) -> None:
        self.archiver.start()
        super().run()

    def request_stop(self) -> None:
        self.archiver.request_stop()
        super().request_stop()

    def stop(self, wait: bool = True) -> None:
        super().stop(wait)
        self.archiver.stop(wait)

    # -- finding work ------------------------------------------------------------------

    def _hints(self) -> Any:
        return self._due.hints()

    def _on_hint(self, data: Any) -> None:
        slot, due_ms = data.split()
        with self._changed:
            self._schedule(int(slot), int(due_ms))

    def _schedule(self, slot: int, due_ms: int) -> None:
        """Look at ``slot`` at ``due_ms`` (at once if it is due), unless a timer of it
        is set sooner already.  Called holding the lock."""
        if due_ms <= now_ms():
            self._ready.add(slot)
            self._changed.notify_all()
        else:
            self._set_timer(slot, due_ms)

    def _sweep(self) -> None:
        for slot, due_ms in self._due.earliest():
            with self._changed:
                self._schedule(slot, due_ms)

    def _step(self) -> None:
        with self._changed:
            self._ready.update(self._due_timers())
        self._claim()
        with self._changed:
            if self._stop.is_set():
                return
            if self._ready and self._playing < self._config.bot_concurrency:
                return
            self._wait()

    def _claim(self) -> None:
        """Claim due games of the ready slots while threads are free."""
        lease_ms = int(self._config.bot_claim_seconds * 1000)
        while not self._stop.is_set():
            with self._changed:
                free = self._config.bot_concurrency - self._playing
                if free <= 0 or not self._ready:
                    return
                slot = self._ready.pop()
            at = now_ms()
            games, next_ms = self._due.claim(slot, at, lease_ms, free)
            with self._changed:
                self._playing += len(games)
                if next_ms is not None:
                    self._schedule(slot, next_ms)  # at once when more are due
            for game_id, due_ms in games:
                self.metrics.lateness.observe(max(0, at - due_ms) / 1000)
                self._pool.submit(self._play, game_id, at + lease_ms)

    def _play(self, game_id: str, claimed_until_ms: int) -> None:
        """Play one claim: the game's due turn, one write; a claim that wrote nothing is
        given back (a game gone: its entry dropped)."""
        began = time.perf_counter()
        try:
            played = Played()
            try:
                played = play_due(self._store, self._config, game_id)
            except GameNotFound:
                pass
            if not played.events:
                restored = self._due.release(game_id, claimed_until_ms, now_ms())
                if restored is not None:  # due later after all: told to no one else
                    with self._changed:
                        self._schedule(slot_of(game_id), restored)
            self._count(played, time.perf_counter() - began)
        except Exception:  # kept claimed: due again once its lease ends
            log.exception("bot worker: could not play game %s", game_id)
            self.metrics.claims.labels("failed").inc()
        finally:
            with self._changed:
                self._playing -= 1
                self.plays += 1
                self._changed.notify_all()

    def _count(self, played: Played, seconds: float) -> None:
        metrics = self.metrics
        metrics.claims.labels("written" if played.events else "nothing").inc()
        metrics.play_seconds.observe(seconds)
        metrics.moves.inc(played.moves)
        if played.finished:
            metrics.games_finished.inc()
