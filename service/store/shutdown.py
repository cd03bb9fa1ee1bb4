"""A process-wide "we are shutting down" signal for the store.

Gunicorn's SIGTERM handler (see ``deploy/gunicorn.conf.py``) calls
:func:`request_shutdown`; :meth:`GameStore.events` checks :data:`SHUTTING_DOWN`
between its short blocking reads, so a long poll answers with what it has (no
events, the same cursor) within about a second instead of holding the worker's
graceful stop for up to ``LONG_POLL_MAX_SECONDS``.  Clients simply poll again,
reaching another instance.
"""

from __future__ import annotations

import threading

SHUTTING_DOWN = threading.Event()
"""Set once this process has been asked to stop; never cleared in production."""


def request_shutdown() -> None:
    """Make every long poll of this process return early from now on (safe in a signal handler)."""
    SHUTTING_DOWN.set()


def shutting_down() -> bool:
    """True once :func:`request_shutdown` was called in this process."""
    return SHUTTING_DOWN.is_set()


def reset() -> None:
    """Clear the signal (tests only)."""
    SHUTTING_DOWN.clear()
