"""The fast lane: the hottest requests answered straight from WSGI.

A game client spends its life on a few requests: the public view (often as a
conditional GET answered 304), its own view, its moves, and waiting for the next
events (a long poll or a stream).  Flask's request machinery -- context push,
routing, flask-smorest's wrappers, the response object's finalisation -- costs
more than the work these requests do (and a waiting client would hold its
objects and deep frames while it waits), so :class:`FastLane` sits between the
WSGI middleware and Flask and answers them itself by calling **the same
handlers** the Flask views call (and, for a player's credential, reading the
game the handler reads first in the round trip that checks the credential:
:attr:`~service.api.context.Call.first_read`), with the same error mapping
(:func:`service.api.problems.answer_for`).  Which requests, which handler, the
limit counted first and the template the metrics name them by all come from the
route table (:func:`service.api.routes.fast_routes`), as Flask's routes do.  The
HTTP contract is unchanged; the Flask routes stay (the spec is built from them
and they answer everything the fast lane passes on).

Handlers answer a werkzeug ``Response`` on either path; the lane starts it
with werkzeug's own ``Response.__call__``, as Flask would.

Passed on to Flask untouched: every other path or method, and requests with a
body (a move) without a ``Content-Length`` (in ASCII digits) or over
``MAX_BODY_BYTES``; a chunked body has been read and sized by the middleware
already (:mod:`service.api.middleware`), so it comes here with its length.
``FAST_LANE=false`` turns the lane off.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from service.api import access, app_limits, problems
from service.api.context import CURRENT_CALL, Call, Services
from service.api.metrics import ROUTE_KEY
from service.api.middleware import StartResponse, WSGIApp
from service.api.routes import FastRoute

CONTENT_LENGTH = re.compile(r"[0-9]{1,18}")  # ASCII digits only: "²".isdigit() is True

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class FastLane:
    """Wraps Flask's ``wsgi_app``; see the module docstring."""

    def __init__(
        self, app: WSGIApp, services: Services, routes: Mapping[str, tuple[FastRoute, ...]]
    ) -> None:
        self.app = app
        self.services = services
        self.routes = routes
        self.max_body = services.config.max_body_bytes

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "")
        path = environ.get("PATH_INFO", "")
        for route in self.routes.get(method, ()):
            match = route.pattern.fullmatch(path)
            if match is not None:
                break
        else:
            return self.app(environ, start_response)
        body = b""
        if method in BODY_METHODS:
            body_or_none = self._read_body(environ)
            if body_or_none is None:
                return self.app(environ, start_response)
            body = body_or_none
        environ[ROUTE_KEY] = route.template
        # current until the middleware, around every request, resets it
        this_call = Call(environ, self.services, None, body)
        CURRENT_CALL.set(this_call)
        try:
            params = match.groupdict()
            if route.first_read is not None:  # for a player's credential's check
                this_call.first_read = route.first_read(this_call, params["game_id"])
            if route.limited is not None:  # before the handler, as Flask's hook
                app_limits.count(this_call, route.limited)
            access.check(this_call, route.access, params)  # apps mode: who may call it
            response = route.handler(**params)
        except Exception as exc:  # mapped exactly as Flask's error handlers map it
            response = problems.answer_for(exc)
        return response(environ, start_response)

    def _read_body(self, environ: dict[str, Any]) -> bytes | None:
        """The body, or None when Flask should handle the request (no length,
        too long, chunked...); then ``wsgi.input`` is left unread for it."""
        length = environ.get("CONTENT_LENGTH", "")
        if not CONTENT_LENGTH.fullmatch(length) or int(length) > self.max_body:
            return None
        if environ.get("HTTP_TRANSFER_ENCODING"):
            return None
        body: bytes = environ["wsgi.input"].read(int(length))
        return body
