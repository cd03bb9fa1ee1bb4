"""The request being answered, as the handlers see it, with or without Flask.

Handlers read the request through :func:`call` (headers, body, path) and reach
Redis through :func:`store`.  Under Flask these wrap ``flask.request`` and the
app's services; the fast lane (:mod:`service.api.fastlane`), which answers the
hottest requests straight from WSGI, binds a :class:`Call` for the duration of
its request with :func:`bound`.  Either way the same handler code runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from flask import current_app, request

from service.config import Config
from service.store import GameStore

CALL_KEY = "t13.call"


@dataclass(frozen=True, slots=True)
class Services:
    """What the handlers share for the app's lifetime."""

    config: Config
    store: GameStore


@dataclass(slots=True)
class Call:
    """One request: its WSGI environ, a reader of its body, and the services."""

    environ: dict[str, Any]
    services: Services
    read_body: Callable[[], bytes]
    _body: bytes | None = field(default=None, repr=False)

    def header(self, name: str) -> str | None:
        """A request header (``Authorization``, ``If-Match``...), or None."""
        value = self.environ.get("HTTP_" + name.upper().replace("-", "_"))
        return value if isinstance(value, str) else None

    @property
    def method(self) -> str:
        return str(self.environ.get("REQUEST_METHOD", "GET"))

    @property
    def path(self) -> str:
        return str(self.environ.get("PATH_INFO", ""))

    def body(self) -> bytes:
        if self._body is None:
            self._body = self.read_body()
        return self._body


_bound: ContextVar[Call | None] = ContextVar("t13_call", default=None)


def call() -> Call:
    """The request being answered (the fast lane's, else Flask's)."""
    found = _bound.get()
    if found is not None:
        return found
    environ = request.environ
    made = environ.get(CALL_KEY)
    if made is None:
        made = Call(environ, current_app.extensions["t13"], lambda: request.get_data(cache=True))
        environ[CALL_KEY] = made
    return made  # type: ignore[no-any-return]


@contextlib.contextmanager
def bound(current: Call) -> Iterator[Call]:
    """Make ``current`` the request that :func:`call` returns, for this block."""
    token = _bound.set(current)
    try:
        yield current
    finally:
        _bound.reset(token)


def services() -> Services:
    return call().services


def store() -> GameStore:
    return call().services.store
