"""The skeleton the background workers share: work kept per hash slot, found by hints,
timers and sweeps.

Both workers (webhook deliveries, :mod:`service.webhooks.worker`; bots' turns,
:mod:`service.botplay.worker`) keep their work in Redis per hash slot, and find it
the same way:

* **Hints.** A write that makes work publishes its slot on a channel; a listener
  thread hands each message to :meth:`SlotWorker._on_hint`.  A hint is only a
  wake-up: losing one delays work, never loses it.  On every (re)subscription the
  worker sweeps, since hints published meanwhile were missed.
* **Timers.** Work due later (a retry, a turn's deadline, a claim's lease) sets a
  timer of its slot (:meth:`SlotWorker._set_timer`); the main loop takes the slots
  whose timers are due (:meth:`SlotWorker._due_timers`).
* **Sweeps.** A thread of its own calls :meth:`SlotWorker._sweep` at once, then
  every ``sweep_seconds`` or when asked, and catches up on what the hints missed.

The main loop (:meth:`SlotWorker._step`, the subclass's) runs in the thread that
calls :meth:`SlotWorker.run`, or in a thread of its own after
:meth:`SlotWorker.start`; the work itself runs in a pool of ``concurrency`` threads.
A step or a sweep that Redis cannot serve is logged and tried again after a pause.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Self

from service.store.store_errors import StoreUnavailable

log = logging.getLogger(__name__)

LISTEN_SECONDS = 1.0
"""The listener, and the main loop without a timer, wait this long before they check
that they should go on."""

RECONNECT_PAUSE_SECONDS = 1.0
"""The pause after Redis could not serve a step, a sweep or the hints."""


def now_ms() -> int:
    """Unix time in milliseconds (what the stores' due times are in)."""
    return int(time.time() * 1000)


class SlotWorker:
    """Threads, hints, timers and sweeps of a worker (see the module's docstring);
    a subclass says what a hint means, how to sweep and what one step of work is."""

    def __init__(self, name: str, *, concurrency: int, sweeps: bool, sweep_seconds: float):
        """``name`` names the threads and the log lines; ``sweeps=False`` for a worker
        that lives in the only process using its store (the embedded one): no hint can
        be missed and no other worker can die there."""
        self._name = name
        self._sweeps = sweeps
        self._sweep_seconds = sweep_seconds
        self._stop = threading.Event()
        self._changed = threading.Condition()
        """Guards the subclass's state and :attr:`_ready`; notified when either changes."""
        self._ready: set[int] = set()
        """Slots with work to do now."""
        self._timers: list[tuple[int, int]] = []  # (due ms, slot), a heap
        self._next: dict[int, int] = {}  # slot -> its earliest timer (ms)
        self._sweep_now = threading.Event()
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix=name)
        self._subscribed = threading.Event()
        self._threads: list[threading.Thread] = []

    # -- what a subclass says ------------------------------------------------------------

    def _hints(self) -> Any:
        """A new pub/sub connection subscribed to the worker's hints."""
        raise NotImplementedError

    def _on_hint(self, data: Any) -> None:
        """Take a hint's message data."""
        raise NotImplementedError

    def _sweep(self) -> None:
        """Look at every slot (in the sweeps' thread)."""
        raise NotImplementedError

    def _step(self) -> None:
        """One turn of the main loop: do what is due, then wait (under
        :attr:`_changed`) until something changes or a timer is due."""
        raise NotImplementedError

    # -- running ---------------------------------------------------------------------

    def start(self) -> Self:
        """Run in threads of this process; returns once the hints are subscribed."""
        self._start_helpers()
        thread = threading.Thread(target=self._run, name=f"{self._name}-worker", daemon=True)
        thread.start()
        self._threads.append(thread)
        self._subscribed.wait(10)
        return self

    def run(self) -> None:
        """Run until :meth:`request_stop` (the listener and the sweeps in threads, the
        loop in this one)."""
        self._start_helpers()
        self._run()

    def _start_helpers(self) -> None:
        helpers: list[tuple[Callable[[], None], str]] = [(self._listen, f"{self._name}-hints")]
        if self._sweeps:
            helpers.append((self._sweep_loop, f"{self._name}-sweeps"))
        for target, name in helpers:
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def request_stop(self) -> None:
        """Make :meth:`run` return soon (safe in a signal handler)."""
        self._stop.set()
        self._sweep_now.set()
        with self._changed:
            self._changed.notify_all()

    def stop(self, wait: bool = True) -> None:
        """Take no more work; with ``wait``, let the work under way finish.  The loop
        ends before the pool does: work it took as it was told to stop still runs
        (a pool shut first refuses it, and the loop's thread dies of it)."""
        self.request_stop()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(5)
        self._pool.shutdown(wait=wait, cancel_futures=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._survive("worker", self._step)

    def _survive(self, what: str, step: Callable[[], None]) -> None:
        """Run ``step``; when Redis cannot serve it, say so and pause a moment."""
        try:
            step()
        except StoreUnavailable as exc:
            log.warning("%s %s: %s", self._name, what, exc)
            self._stop.wait(RECONNECT_PAUSE_SECONDS)

    # -- finding work ------------------------------------------------------------------

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                pubsub = self._hints()
            except StoreUnavailable as exc:
                log.warning("%s hints: %s", self._name, exc)
                self._stop.wait(RECONNECT_PAUSE_SECONDS)
                continue
            try:
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=LISTEN_SECONDS)
                    if message is None:
                        continue
                    if message["type"] == "subscribe":
                        self._subscribed.set()
                        self._sweep_now.set()  # hints published meanwhile were missed
                    elif message["type"] == "message":
                        self._on_hint(message["data"])
            except Exception as exc:  # a dropped connection: subscribe anew
                log.warning("%s hints: %s", self._name, exc)
                self._stop.wait(RECONNECT_PAUSE_SECONDS)
            finally:
                try:
                    pubsub.close()
                except Exception:
                    pass

    def _sweep_loop(self) -> None:
        """Sweep at once, then every ``sweep_seconds`` or when asked (in a thread of its
        own: the main loop goes on taking what the hints announce meanwhile)."""
        self._sweep_now.set()
        while not self._stop.is_set():
            self._sweep_now.wait(self._sweep_seconds)
            self._sweep_now.clear()
            if not self._stop.is_set():
                self._survive("sweep", self._sweep)

    def _set_timer(self, slot: int, due_ms: int) -> None:
        """Look at ``slot`` at ``due_ms`` (Unix ms), unless a timer of it is set sooner
        already.  Called holding :attr:`_changed`."""
        if self._next.get(slot, due_ms + 1) <= due_ms:
            return
        self._next[slot] = due_ms
        heapq.heappush(self._timers, (due_ms, slot))
        self._changed.notify_all()

    def _due_timers(self) -> list[int]:
        """The slots whose timers are due, their timers taken.  Called holding
        :attr:`_changed`."""
        now, due = now_ms(), []
        while self._timers and self._timers[0][0] <= now:
            at, slot = heapq.heappop(self._timers)
            if self._next.get(slot) == at:
                del self._next[slot]
                due.append(slot)
        return due

    def _wait(self) -> None:
        """Wait until notified, the next timer is due, or :data:`LISTEN_SECONDS` pass.
        Called holding :attr:`_changed`."""
        wake = self._timers[0][0] / 1000 - time.time() if self._timers else LISTEN_SECONDS
        self._changed.wait(max(0.0, min(wake, LISTEN_SECONDS)))
