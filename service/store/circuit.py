"""A circuit breaker per Redis server: once it is known down, fail fast for a moment.

A server is marked down when a connection to it or a reply from it does not
come in time (a long enough wait: see :data:`TRIP_AFTER_SECONDS`); errors that
cost no wait (a refused connection: the server is restarting) do not trip it.  For the
next :data:`OPEN_SECONDS` every command to it fails at once with
:class:`CircuitOpen`, instead of each request waiting out its budget (and
holding a worker thread meanwhile).  Then one connection is let through as a
probe while the others still fail fast: its success closes the circuit, its
failure opens it again.  A connection that breaks on a server that is up (a
restart, an idle socket closed) does not trip it: redis-py retries on a new one.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import redis

OPEN_SECONDS = 1.0
PROBE_SECONDS = 3.0
TRIP_AFTER_SECONDS = 0.25
"""A timeout trips the circuit only if the command was given at least this long:
a request that had spent its own budget says nothing about the server."""


class CircuitOpen(redis.ConnectionError):
    """Redis was found down a moment ago; not tried again yet."""


class Circuit:
    """The breaker of one server address; thread-safe."""

    __slots__ = ("_lock", "_probe", "open_until")

    def __init__(self) -> None:
        self.open_until = 0.0  # 0: closed (the fast path reads only this)
        self._probe: Any = None
        self._lock = threading.Lock()

    def check(self, conn: Any) -> None:
        """Raise :class:`CircuitOpen` unless ``conn`` may talk to the server now."""
        if not self.open_until or self._probe is conn:
            return
        with self._lock:
            now = time.monotonic()
            if not self.open_until or self._probe is conn:
                return
            if now < self.open_until:
                raise CircuitOpen("Redis did not answer a moment ago; not retried yet")
            # the one probe; the others keep failing fast (another probe goes if
            # this one has not reported within PROBE_SECONDS)
            self._probe, self.open_until = conn, now + PROBE_SECONDS

    def succeeded(self) -> None:
        if self.open_until:
            with self._lock:
                self.open_until, self._probe = 0.0, None

    def released(self, conn: Any) -> None:
        """``conn`` failed without a wait that says the server is down (a refused
        connect, a spent budget): if it was the probe, the next caller probes."""
        if self._probe is conn:
            with self._lock:
                if self._probe is conn:
                    self._probe, self.open_until = None, time.monotonic()

    def failed(self) -> None:
        with self._lock:
            self.open_until, self._probe = time.monotonic() + OPEN_SECONDS, None


_circuits: dict[Any, Circuit] = {}
_circuits_lock = threading.Lock()


def circuit_for(address: Any) -> Circuit:
    """The one circuit of ``address`` (``(host, port)`` or a socket path) in this process."""
    circuit = _circuits.get(address)
    if circuit is None:
        with _circuits_lock:
            circuit = _circuits.setdefault(address, Circuit())
    return circuit
