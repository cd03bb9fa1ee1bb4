"""A total deadline for each attempt: one thread that shuts a connection's socket down
when its attempt's time is up, whatever the attempt is waiting for then.

A socket timeout bounds each wait for a read; a receiver that sends one byte just
before every timeout keeps an attempt going for as long as it likes.  Shutting the
socket down ends any read or write under way on it at once (the attempt sees the
connection closed), so an attempt never outlives its deadline by more than this
thread's wake-up.
"""

from __future__ import annotations

import heapq
import itertools
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Watch:
    """One attempt's deadline: :meth:`attach` the socket as soon as it exists (before
    the TLS handshake); :attr:`fired` says, once the watch ended, whether it was shut
    down at the deadline."""

    def __init__(self, owner: Deadlines, number: int, deadline: float) -> None:
        self._owner = owner
        self._number = number
        self.deadline = deadline
        self.fired = False

    def attach(self, sock: socket.socket) -> None:
        self._owner._add(self._number, self.deadline, sock)


class Deadlines:
    """Shuts watched sockets down at their deadlines (:meth:`watch`)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._heap: list[tuple[float, int, socket.socket]] = []
        self._live: dict[int, bool] = {}  # watch number -> fired
        self._numbers = itertools.count()
        self._thread: threading.Thread | None = None

    @contextmanager
    def watch(self, deadline: float) -> Iterator[Watch]:
        """A :class:`Watch` for ``deadline`` (``time.monotonic()``): the socket attached
        to it is shut down then, unless the block has ended."""
        number = next(self._numbers)
        watch = Watch(self, number, deadline)
        with self._changed:
            self._live[number] = False
        try:
            yield watch
        finally:
            with self._changed:
                watch.fired = self._live.pop(number)

    def _add(self, number: int, deadline: float, sock: socket.socket) -> None:
        with self._changed:
            if number not in self._live:
                return
            heapq.heappush(self._heap, (deadline, number, sock))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="webhook-deadlines", daemon=True
                )
                self._thread.start()
            self._changed.notify()

    def _run(self) -> None:
        while True:
            with self._changed:
                while self._heap and self._heap[0][1] not in self._live:
                    heapq.heappop(self._heap)  # ended in time
                if not self._heap:
                    self._changed.wait()
                    continue
                deadline, number, sock = self._heap[0]
                left = deadline - time.monotonic()
                if left > 0:
                    self._changed.wait(left)
                    continue
                heapq.heappop(self._heap)
                self._live[number] = True
            try:
                # the plain socket's shutdown, an SSL socket's too (its own would
                # drop its SSL state under the reading thread)
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass  # closed meanwhile
