"""redis-py connections that wait no longer than the request's budget, and stop
knocking on a server found down.

:class:`BudgetRetry` and the connection classes below are what :func:`options`
gives redis-py (the game store's client and the rate limiter's): every socket
operation -- TCP connect, TLS and AUTH/HELLO handshake, health-check PING,
send, read -- waits at most what is left of the request's budget
(:mod:`service.store.budget`); retries stop when it is spent; and each
connection asks its server's :class:`~service.store.circuit.Circuit` first, and
tells it what happened.  So a request's Redis wait is bounded by the budget
however many commands, reconnects and retries it makes, and once Redis is known
down the next requests fail at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from service.library_internals import ConnectHook, connection_socket
from service.store.budget import remaining, wait_for
from service.store.circuit import TRIP_AFTER_SECONDS, CircuitOpen, circuit_for

T = TypeVar("T")


def trips(wait: float | None) -> bool:
    """Whether a timeout after waiting ``wait`` means the server is down."""
    return wait is None or wait >= TRIP_AFTER_SECONDS


class Bounded(ConnectHook):
    """Mixin over a redis-py connection class (first in the bases)."""

    socket_timeout: float | None
    socket_connect_timeout: float | None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cap = self.socket_timeout
        self._connect_cap = self.socket_connect_timeout
        path = kwargs.get("path")
        self.circuit = circuit_for(path or (kwargs.get("host"), kwargs.get("port")))

    def open_socket(self, attempt: Callable[[], Any]) -> Any:
        self.circuit.check(self)
        wait = wait_for(self._connect_cap)
        self.socket_connect_timeout = wait
        self.socket_timeout = wait_for(self._cap)  # the TLS handshake's wait
        try:
            return attempt()
        except OSError as exc:  # a refused connect costs no wait: no trip
            self.report(wait, timed_out=isinstance(exc, TimeoutError))
            raise

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        self.circuit.check(self)
        wait = wait_for(self._cap)
        if (sock := connection_socket(self)) is not None:
            sock.settimeout(wait)
        try:
            super().send_packed_command(command, check_health)  # type: ignore[misc]
        except (redis.TimeoutError, redis.ConnectionError) as exc:
            self.report(wait, timed_out=isinstance(exc, redis.TimeoutError))
            raise

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        wait = wait_for(self._cap)
        if (sock := connection_socket(self)) is not None and "timeout" not in kwargs:
            sock.settimeout(wait)
        try:
            response = super().read_response(*args, **kwargs)  # type: ignore[misc]
        except (redis.TimeoutError, redis.ConnectionError) as exc:
            self.report(wait, timed_out=isinstance(exc, redis.TimeoutError))
            raise
        except redis.ResponseError:  # an error reply: the server is answering
            self.circuit.succeeded()
            raise
        self.circuit.succeeded()
        return response

    def report(self, wait: float | None, timed_out: bool) -> None:
        """Tell the circuit about a failure after a wait of ``wait``."""
        if timed_out and trips(wait):
            self.circuit.failed()
        else:
            self.circuit.released(self)


class BoundedConnection(Bounded, redis.Connection):
    pass


class BoundedSSLConnection(Bounded, redis.SSLConnection):
    pass


class BoundedUnixConnection(Bounded, redis.UnixDomainSocketConnection):
    pass


class BudgetRetry(Retry):
    """redis-py's ``Retry``, but no retry (nor backoff sleep) past the budget,
    and none after :class:`CircuitOpen`."""

    def call_with_retry(
        self,
        do: Callable[[], T],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:
        self._backoff.reset()
        failures = 0
        while True:
            try:
                return do()
            except self._supported_errors as error:
                if is_retryable and not is_retryable(error):
                    raise
                failures += 1
                if with_failure_count:
                    fail(error, failures)
                else:
                    fail(error)
                pause = self._backoff.compute(failures)
                left = remaining()
                if (
                    isinstance(error, CircuitOpen)
                    or 0 <= self._retries < failures
                    or (left is not None and left <= pause)
                ):
                    raise
                if pause > 0:
                    time.sleep(pause)


def pool_options(max_connections: int, timeout: float) -> dict[str, Any]:
    """Keyword arguments for a ``redis.BlockingConnectionPool`` (or, on Redis Cluster,
    each node's): at most ``max_connections``, a caller waiting up to ``timeout`` for one."""
    return {"max_connections": max_connections, "timeout": timeout}


def connection_class(url: str) -> type[redis.connection.AbstractConnection]:
    """The bounded connection class for ``url``'s scheme."""
    if url.startswith("unix://"):
        return BoundedUnixConnection
    if url.startswith("rediss://"):
        return BoundedSSLConnection
    return BoundedConnection


def options(url: str, timeout: float, retries: int) -> dict[str, Any]:
    """Keyword arguments for ``redis.Redis.from_url(url, ...)``: bounded
    connections, ``timeout`` per socket operation, ``retries`` within the budget."""
    return {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "retry": BudgetRetry(ExponentialBackoff(cap=0.5, base=0.05), retries),
        "connection_class": connection_class(url),
    }
