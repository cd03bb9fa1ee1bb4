"""Ending waits that are over: one ticker for all the timed waits of a process.

A timed wait (:meth:`service.store.wakeups.Watch.wait`) puts its event in the
bucket of the tick its wait ends at; a ticker (a thread, a greenlet under
gevent) sets the events of each bucket whose tick has come, every
:data:`TICK_SECONDS`, so a wait ends at most a tick late.  No timer object per
wait: thousands of clients wait at once, each for seconds, and every object
each of them holds is walked by every full garbage collection.  The ticker runs
only while some wait is timed.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any

log = logging.getLogger(__name__)

TICK_SECONDS = 0.05
"""How often the ticker ends the waits that are over: how late one may end."""


class Timeouts:
    """The timed waits of a process, by the tick each ends at.  Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buckets: dict[int, set[Any]] = {}
        self._ticking = False

    def add(self, event: Any, seconds: float) -> int:
        """Set ``event`` (a ``threading.Event``) once ``seconds`` have passed, unless
        :meth:`discard` ed first; returns the tick to discard it from."""
        tick = math.ceil((time.monotonic() + seconds) / TICK_SECONDS)
        with self._lock:
            self._buckets.setdefault(tick, set()).add(event)
            if not self._ticking:
                self._ticking = True
                name = f"timeouts-{id(self):x}"
                threading.Thread(target=self._run, name=name, daemon=True).start()
        return tick

    def discard(self, event: Any, tick: int) -> None:
        """Forget ``event``'s wait ending at ``tick`` (if not ended yet)."""
        with self._lock:
            bucket = self._buckets.get(tick)
            if bucket is not None:
                bucket.discard(event)
                if not bucket:
                    del self._buckets[tick]

    def pending(self) -> int:
        """The number of timed waits not over yet (tests check they are forgotten)."""
        with self._lock:
            return sum(len(bucket) for bucket in self._buckets.values())

    def _run(self) -> None:
        while True:
            time.sleep(TICK_SECONDS)
            now = math.floor(time.monotonic() / TICK_SECONDS)
            with self._lock:
                over = [self._buckets.pop(tick) for tick in [t for t in self._buckets if t <= now]]
                if not self._buckets:  # a later add() starts another ticker
                    self._ticking = False
            for bucket in over:
                for event in bucket:
                    event.set()
            if not self._ticking:
                return
