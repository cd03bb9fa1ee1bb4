"""The time a request may spend waiting on Redis: one deadline for all its commands.

The WSGI middleware opens a budget of ``REDIS_TIMEOUT_SECONDS`` per request
(:func:`open_budget`); every connect, handshake, health check, read and retry of
every Redis command the request makes -- the game store's and the rate limiter's
-- waits at most until that deadline (see :mod:`service.store.bounded`).  A
blocking command (the long poll's ``XREAD BLOCK``) adds its own block time with
:func:`extend`.  Outside any budget each socket operation waits at most its
connection's own timeout.  A context variable: each thread (and request) has its own.
"""

from __future__ import annotations

import time
from contextvars import ContextVar, Token

MIN_WAIT_SECONDS = 0.001
"""The wait given once the budget is spent: a reply already there is still read,
anything slower times out through redis-py's own error path."""

_DEADLINE: ContextVar[float | None] = ContextVar("t13_redis_deadline", default=None)


def open_budget(seconds: float) -> Token[float | None] | None:
    """Start a budget of ``seconds`` from now, unless an earlier deadline is open
    (then None: the earlier one stands).  Pass the result to :func:`close_budget`."""
    current = _DEADLINE.get()
    deadline = time.monotonic() + seconds
    if current is not None and current <= deadline:
        return None
    return _DEADLINE.set(deadline)


def close_budget(token: Token[float | None] | None) -> None:
    if token is not None:
        _DEADLINE.reset(token)


def remaining() -> float | None:
    """Seconds left of the open budget (<= 0 once spent); None without one."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()


def extend(seconds: float) -> None:
    """Add ``seconds`` to the open budget (the time a blocking command is meant
    to block is not time lost to a stalled Redis); no-op without one."""
    deadline = _DEADLINE.get()
    if deadline is not None:
        _DEADLINE.set(deadline + seconds)


def wait_for(cap: float | None) -> float | None:
    """How long the next socket operation may wait: ``cap`` (the connection's
    own timeout) or what is left of the budget, whichever is shorter."""
    left = remaining()
    if left is None:
        return cap
    left = max(MIN_WAIT_SECONDS, left)
    return left if cap is None else min(cap, left)
