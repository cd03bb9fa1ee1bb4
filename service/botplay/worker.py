"""The bot worker: finds games whose turn is due, claims them, plays them.

It works the due games (:mod:`service.store.due_games`) as a
:class:`~service.workers.claiming_worker.ClaimingWorker`: hints on
:data:`~service.store.keys.BOT_HINT` mark a slot ready when a bot's turn is due now,
or set a timer for a turn timer's deadline, so a turn is played within milliseconds
of its due time; sweeps every ``BOT_SWEEP_SECONDS`` (about 0.2 s of a worker's CPU)
catch what a hint missed.  It claims no more games than it has free threads
(``BOT_CONCURRENCY``), so a busy worker leaves the rest to others.  A thread plays one
claim: one stretch of bot moves or one overdue turn, a write of its own
(:func:`~service.hosting.due_turns.play_due`); the write makes the game due again from
what it left (at once, with bots left to play), behind the games due before it.  So
every game gets its turn, and none holds a thread for long.

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
from typing import Self

from service.botplay.archiver import ArchiveWorker
from service.botplay.bot_metrics import BotMetrics
from service.config import Config
from service.hosting.due_turns import Played, play_due
from service.store import GameNotFound, GameStore
from service.store.due_games import DueGames
from service.store.keys import slot_of
from service.workers.claiming_worker import ClaimingWorker
from service.workers.slot_worker import now_ms

log = logging.getLogger(__name__)


class BotWorker(ClaimingWorker):
    """Plays the due turns of the games in a store (see the module's docstring)."""

    def __init__(self, store: GameStore, config: Config, *, sweeps: bool = True) -> None:
        """``sweeps=False`` for a worker that lives in the only process using its store
        (the embedded one): no hint can be missed and no other worker can die there."""
        self._due = DueGames(store.client)
        super().__init__(
            "bots",
            self._due,
            concurrency=config.bot_concurrency,
            lease_seconds=config.bot_claim_seconds,
            sweeps=sweeps,
            sweep_seconds=config.bot_sweep_seconds,
        )
        self._store = store
        self._config = config
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

    # -- playing ------------------------------------------------------------------------

    def _claimed(self, game_id: str, due_ms: int, at_ms: int) -> None:
        self.metrics.lateness.observe(max(0, at_ms - due_ms) / 1000)

    def _work(self, game_id: str, claimed_until_ms: int) -> None:
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

    def _count(self, played: Played, seconds: float) -> None:
        metrics = self.metrics
        metrics.claims.labels("written" if played.events else "nothing").inc()
        metrics.play_seconds.observe(seconds)
        metrics.moves.inc(played.moves)
        if played.finished:
            metrics.games_finished.inc()
