"""A worker of a per-slot queue of games claimed with a lease
(:class:`~service.store.slot_queues.SlotQueue`): the bot worker's due games and the
archiver's finished games.

How it finds work across up to 16384 hash slots (:class:`SlotWorker` keeps the threads,
the timers and the sweeps' pace):

* **Hints.** A write that queues a game publishes ``"<slot> <due ms>"``; the listener
  marks the slot ready when it is due now, else sets a timer for it.
* **Timers.** Each claim also answers the slot's next due time -- another game's, or
  another worker's claim, which ends when that worker dies -- and the worker looks at
  the slot again then: a dead worker's games are taken over when their lease ends.
* **Sweeps.** Every so often, and whenever the listener (re)subscribes, every slot's
  earliest due time is read in pipelined round trips and the timers set: what a hint
  missed is found then.

The main loop claims due games of the ready slots, no more than it has free threads,
so a busy worker leaves the rest to others; a thread works on one claim
(:meth:`ClaimingWorker._work`).
"""

from __future__ import annotations

from typing import Any

from service.store.slot_queues import SlotQueue
from service.workers.slot_worker import SlotWorker, now_ms


class ClaimingWorker(SlotWorker):
    """Claims the due games of ``queue`` with a lease of ``lease_seconds`` and works on
    each in a thread of its own, ``concurrency`` at most at once."""

    def __init__(
        self,
        name: str,
        queue: SlotQueue,
        *,
        concurrency: int,
        lease_seconds: float,
        sweeps: bool,
        sweep_seconds: float,
    ) -> None:
        super().__init__(name, concurrency=concurrency, sweeps=sweeps, sweep_seconds=sweep_seconds)
        self._queue = queue
        self._concurrency = concurrency
        self._lease_ms = int(lease_seconds * 1000)
        self._working = 0
        self.worked = 0
        """Claims worked on (whatever they came to), for tests and logs."""

    # -- what a subclass says ------------------------------------------------------------

    def _work(self, game_id: str, claimed_until_ms: int) -> None:
        """Work on one claim of ``game_id``, scored ``claimed_until_ms`` (in a thread of
        the pool).  An exception leaves the claim until its lease ends."""
        raise NotImplementedError

    def _claimed(self, game_id: str, due_ms: int, at_ms: int) -> None:
        """Told of each claim as it is taken: ``game_id`` was due at ``due_ms`` and
        claimed at ``at_ms``."""

    # -- finding work ------------------------------------------------------------------

    def _hints(self) -> Any:
        return self._queue.hints()

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
        for slot, due_ms in self._queue.earliest():
            with self._changed:
                self._schedule(slot, due_ms)

    def _step(self) -> None:
        with self._changed:
            self._ready.update(self._due_timers())
        self._claim()
        with self._changed:
            if self._stop.is_set():
                return
            if self._ready and self._working < self._concurrency:
                return
            self._wait()

    def _claim(self) -> None:
        """Claim due games of the ready slots while threads are free."""
        while not self._stop.is_set():
            with self._changed:
                free = self._concurrency - self._working
                if free <= 0 or not self._ready:
                    return
                slot = self._ready.pop()
            at = now_ms()
            games, next_ms = self._queue.claim(slot, at, self._lease_ms, free)
            with self._changed:
                self._working += len(games)
                if next_ms is not None:
                    self._schedule(slot, next_ms)  # at once when more are due
            for game_id, due_ms in games:
                self._claimed(game_id, due_ms, at)
                self._pool.submit(self._work_on, game_id, at + self._lease_ms)

    def _work_on(self, game_id: str, claimed_until_ms: int) -> None:
        try:
            self._work(game_id, claimed_until_ms)
        finally:
            with self._changed:
                self._working -= 1
                self.worked += 1
                self._changed.notify_all()
