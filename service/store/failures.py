"""What a redis-py error means for a request: the store is unavailable, for a named reason.

Every redis-py error leaving a store call becomes
:class:`~service.store.store_errors.StoreUnavailable` (answered 503
``STORE_UNAVAILABLE`` with ``Retry-After``).  Those Redis is expected to give
now and then -- it cannot be reached or times out, it is loading its data
(``LOADING``), it is a replica now (``READONLY``: a demoted primary), a replica
whose primary is down (``MASTERDOWN``), a primary short of the replicas
``min-replicas-to-write`` asks for (``NOREPLICAS``), a cluster slot moving or
unserved (``TRYAGAIN``, ``CLUSTERDOWN``), out of memory (``OOM``), busy
running a script (``BUSY``), failing to save (``MISCONF``) -- are logged as one
WARNING line naming the condition, at most once per :data:`LOG_EVERY_SECONDS`
per condition and process (with the count of those not logged since), never
with a traceback.  Any other error is a bug or a misconfiguration: logged at
ERROR with its traceback, and still answered 503.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import redis
from redis import exceptions as rx

from service.store.store_errors import StoreUnavailable

log = logging.getLogger(__name__)

LOG_EVERY_SECONDS = 10.0
"""A condition is logged at most once in this long per process."""

EXPECTED_REPLIES = (
    "LOADING",
    "READONLY",
    "MASTERDOWN",
    "NOREPLICAS",
    "TRYAGAIN",
    "CLUSTERDOWN",
    "OOM",
    "BUSY",
    "MISCONF",
)
"""Error replies that say the server cannot serve writes (or anything) for now."""

_BY_CLASS: tuple[tuple[type[BaseException], str], ...] = (
    # redis-py strips the code from the message of these: known by class
    (rx.BusyLoadingError, "LOADING"),
    (rx.ReadOnlyError, "READONLY"),
    (rx.MasterDownError, "MASTERDOWN"),
    (rx.TryAgainError, "TRYAGAIN"),
    (rx.ClusterDownError, "CLUSTERDOWN"),
    (rx.OutOfMemoryError, "OOM"),
    (redis.TimeoutError, "timeout"),
    (TimeoutError, "timeout"),
    (redis.ConnectionError, "unreachable"),
    (ConnectionError, "unreachable"),
    (rx.ClusterError, "cluster"),
    (rx.RedisClusterException, "cluster"),
)


def condition(exc: BaseException) -> str | None:
    """The expected condition ``exc`` reports (``"NOREPLICAS"``, ``"timeout"``...),
    or None for an unexpected error.

    >>> condition(redis.ResponseError("NOREPLICAS Not enough good replicas to write."))
    'NOREPLICAS'
    >>> condition(redis.exceptions.ReadOnlyError("You can't write against a read only replica."))
    'READONLY'
    >>> condition(redis.ResponseError("WRONGTYPE Operation against a key")) is None
    True
    """
    for kind, name in _BY_CLASS:
        if isinstance(exc, kind):
            return name
    if isinstance(exc, redis.RedisError):
        code = str(exc).split(" ", 1)[0]
        if code in EXPECTED_REPLIES:
            return code
    return None


class _Throttle:
    """When each condition was last logged, and how many went unlogged since."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._quiet: dict[str, int] = {}

    def admit(self, name: str) -> int | None:
        """None if ``name`` was logged less than :data:`LOG_EVERY_SECONDS` ago
        (counted); else the number not logged since the last line."""
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(name, -LOG_EVERY_SECONDS) < LOG_EVERY_SECONDS:
                self._quiet[name] = self._quiet.get(name, 0) + 1
                return None
            self._last[name] = now
            return self._quiet.pop(name, 0)


_throttle = _Throttle()


def reset_reports() -> None:
    """Forget what was logged when (tests: each sees its conditions' first lines)."""
    global _throttle
    _throttle = _Throttle()


def unavailable(exc: BaseException) -> StoreUnavailable:
    """The :class:`StoreUnavailable` to raise for redis-py's ``exc`` (logged as the
    module's docstring says)."""
    name = condition(exc)
    if name is None:
        log.error("unexpected Redis error", exc_info=exc)
        return StoreUnavailable(f"Redis error: {exc}")
    report_condition(name, str(exc))
    return StoreUnavailable(f"Redis unavailable ({name}): {exc}")


def report_condition(name: str, detail: str) -> None:
    """Log the expected condition ``name`` as one WARNING line (throttled)."""
    quiet = _throttle.admit(name)
    if quiet is not None:
        more = f" ({quiet} more since the last report)" if quiet else ""
        log.warning("Redis unavailable (%s): %s%s", name, detail, more)


class translate_errors:  # lower case: used as ``with translate_errors():``, like a function
    """Turn every redis-py error into :class:`StoreUnavailable` (never leak them),
    logged as the module's docstring says.

    (A class, not a ``@contextmanager`` generator: it wraps every round trip,
    and a generator costs more to make and run than these two methods.)
    """

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        if exc is None:
            return
        if isinstance(exc, redis.RedisError | redis.RedisClusterException | OSError):
            raise unavailable(exc) from exc
