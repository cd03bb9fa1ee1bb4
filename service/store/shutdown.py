"""A process-wide "we are shutting down" signal for the store.

Gunicorn's SIGTERM handler (see ``deploy/gunicorn.conf.py``) calls
:func:`request_shutdown`: every waiter of the process is woken at once (each
:class:`~service.store.wakeups.Wakeups` registered here is stopped), long polls
answer with what they have (no events, the same cursor) and event streams end
with a last comment, so the worker's graceful stop is not held for up to
``LONG_POLL_MAX_SECONDS``.  Clients poll again or reconnect, reaching another
instance.
"""

from __future__ import annotations

import threading
import weakref
from typing import Protocol


class Stoppable(Protocol):
    def stop(self) -> None: ...


SHUTTING_DOWN = threading.Event()
"""Set once this process has been asked to stop; never cleared in production."""

_STOP_ON_SHUTDOWN: weakref.WeakSet[Stoppable] = weakref.WeakSet()


def stop_on_shutdown(hub: Stoppable) -> None:
    """Have :func:`request_shutdown` stop ``hub`` (held weakly)."""
    _STOP_ON_SHUTDOWN.add(hub)
    if SHUTTING_DOWN.is_set():
        hub.stop()


def request_shutdown() -> None:
    """Make every waiter of this process return from now on.

    It takes the waiters' locks: a signal handler, which may have interrupted
    their holder, runs it on a new greenlet or thread instead (see
    ``deploy/gunicorn.conf.py``).
    """
    SHUTTING_DOWN.set()
    for hub in list(_STOP_ON_SHUTDOWN):
        hub.stop()


def shutting_down() -> bool:
    """True once :func:`request_shutdown` was called in this process."""
    return SHUTTING_DOWN.is_set()


def reset() -> None:
    """Clear the signal (tests only)."""
    SHUTTING_DOWN.clear()
