"""The request being answered, as the handlers see it, with or without Flask.

Handlers read the request through :func:`call` (headers, body, path) and reach
Redis through :func:`store`.  The :class:`Call` of a request is current in
:data:`CURRENT_CALL`, beside its WSGI environ (:data:`service.logs.CURRENT_REQUEST`),
both made current by the middleware for the request.  The fast lane
(:mod:`service.api.fastlane`), which answers the hottest requests straight
from WSGI, makes its own Call current; otherwise one is made from Flask's
request on first use.  Either way the same handler code runs.  A context
variable, not a key of the environ: a Call holds its environ, and an environ
holding its Call would make every request a reference cycle, left for the
garbage collector (and promoted to its oldest generation when the request
waits).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flask import current_app, request

from service.api.limits import RateLimits, by_address
from service.api.stream_caps import StreamCaps
from service.config import Config
from service.hosting.apps import AppDirectory
from service.hosting.lobby_caps import Hold
from service.logs import CURRENT_REQUEST
from service.store import GameStore
from service.store.game_reads import Read

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Services:
    """What the handlers share for the app's lifetime."""

    config: Config
    store: GameStore
    limits: RateLimits | None = None
    """The rate limits (None when ``RATE_LIMITS`` is off)."""
    stream_caps: StreamCaps | None = None
    """The caps on open event streams (None when ``RATE_LIMITS`` is off or both are 0)."""
    apps: AppDirectory | None = None
    """The apps' records (``AUTH_MODE=apps``; None in open mode)."""


_ENVIRON_KEYS: dict[str, str] = {}
"""Header name -> its WSGI environ key (``If-Match`` -> ``HTTP_IF_MATCH``)."""


@dataclass(slots=True)
class Call:
    """One request: its WSGI environ, the services, and its body or a reader of it
    (the fast lane has read it already: no closure over it, which would live as
    long as a waiting request)."""

    environ: dict[str, Any]
    services: Services
    read_body: Callable[[], bytes] | None
    _body: bytes | None = field(default=None, repr=False)
    identity: Any = field(default=None, repr=False)
    """Who is asking, once :func:`service.api.auth.principal` found out (apps mode)."""
    first_read: Read[Any] | None = field(default=None, repr=False)
    """The read of its game the handler makes first (the fast lane's routes name it):
    a player's credential is checked in the same round trip, and what it read kept
    in :attr:`prefetched` for the handler."""
    prefetched: tuple[Read[Any], Any] | None = field(default=None, repr=False)
    """A read made already for this request and what it found (see :meth:`read`)."""

    def header(self, name: str) -> str | None:
        """A request header (``Authorization``, ``If-Match``...), or None."""
        key = _ENVIRON_KEYS.get(name)
        if key is None:  # names come from the code, never from the client: a few
            key = _ENVIRON_KEYS[name] = "HTTP_" + name.upper().replace("-", "_")
        value = self.environ.get(key)
        return value if isinstance(value, str) else None

    @property
    def method(self) -> str:
        return str(self.environ.get("REQUEST_METHOD", "GET"))

    @property
    def path(self) -> str:
        return str(self.environ.get("PATH_INFO", ""))

    def body(self) -> bytes:
        if self._body is None:
            self._body = b"" if self.read_body is None else self.read_body()
        return self._body

    def read(self, read: Read[T]) -> T:
        """What ``read`` finds: read already for this request when it was the read
        made with the credential's check (:attr:`prefetched`, used once), else read now."""
        taken = self._take_prefetched(read)
        return taken[0] if taken is not None else self.services.store.read(read)

    def prefetched_read(self, read: Read[T]) -> T | None:
        """What :meth:`read` would find without reading: None when ``read`` was not
        made already (a write's first attempt then reads for itself)."""
        taken = self._take_prefetched(read)
        return None if taken is None else taken[0]

    def _take_prefetched(self, read: Read[T]) -> tuple[T] | None:
        """What :attr:`prefetched` found, once, if it is ``read``'s (a 1-tuple, as
        what a read finds may itself be None)."""
        done = self.prefetched
        if done is None or done[0].commands != read.commands:
            return None
        self.prefetched = None
        return (done[1],)


CURRENT_CALL: ContextVar[Call | None] = ContextVar("t13_call", default=None)
"""The request being answered (see the module docstring)."""


def call() -> Call:
    """The request being answered (the fast lane's, else Flask's)."""
    environ = CURRENT_REQUEST.get()
    if environ is None:  # an app driven without the middleware
        environ = request.environ
    made = CURRENT_CALL.get()
    if made is None or made.environ is not environ:
        made = Call(environ, current_app.extensions["t13"], lambda: request.get_data(cache=True))
        CURRENT_CALL.set(made)
    return made


def services() -> Services:
    return call().services


def store() -> GameStore:
    return call().services.store


def config() -> Config:
    return call().services.config


def address() -> str:
    """The client's address, as the rate limits and the lobby caps name it."""
    return by_address(call().environ)


def lobby_hold() -> Hold:
    """A hold of this request on its address's lobby caps."""
    return Hold(store(), config(), address())
