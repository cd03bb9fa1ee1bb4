"""The fast lane: the hottest requests answered straight from WSGI.

A game client spends its life on a few requests: the public view (often as a
conditional GET answered 304), its own view, its moves, and waiting for the next
events (a long poll or a stream; anything unusual goes to Flask).  Flask's request
machinery -- context push, routing, flask-smorest's wrappers, the response
object's finalisation -- costs more than the work these requests do (and a
waiting client would hold its objects and deep frames while it waits), so
:class:`FastLane` sits between the WSGI middleware and Flask and answers them
itself by calling **the same handlers** the Flask views call
(:func:`service.api.handlers.public_view`, ``player_view``, ``make_move``), with
the same error mapping (:func:`service.api.problems.answer_for`).  The HTTP
contract is unchanged; the Flask routes stay (the spec is built from them and
they answer everything the fast lane passes on).

Handlers answer a werkzeug ``Response`` on either path; the lane starts it
with werkzeug's own ``Response.__call__``, as Flask would.

Passed on to Flask untouched: every other path or method, and requests
without a ``Content-Length`` (in ASCII digits) or over ``MAX_BODY_BYTES``; a
chunked body has been read and sized by the middleware already
(:mod:`service.api.middleware`), so it comes here with its length.  Moves are rate
limited by their handler (:meth:`service.api.limits.RateLimits.count_move`), the
same on either path.  ``FAST_LANE=false`` turns the lane off.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from flask import Response

from service.api import following, handlers, problems
from service.api.context import CURRENT_CALL, Call, Services
from service.api.metrics import ROUTE_KEY
from service.api.middleware import StartResponse, WSGIApp
from service.hosting.tokens import GAME_ID_PATTERN

Handler = Callable[[str], Response]

CONTENT_LENGTH = re.compile(r"[0-9]{1,18}")  # ASCII digits only: "²".isdigit() is True

GAME_PATH = re.compile(rf"/v1/games/({GAME_ID_PATTERN})(/view|/moves|/events)?")

# (method, path suffix) -> (handler, route template as Flask names it, for the metrics)
ROUTES: dict[tuple[str, str], tuple[Handler, str]] = {
    ("GET", ""): (handlers.public_view, "/v1/games/<game_id:game_id>"),
    ("GET", "/view"): (handlers.player_view, "/v1/games/<game_id:game_id>/view"),
    ("POST", "/moves"): (handlers.make_move, "/v1/games/<game_id:game_id>/moves"),
    ("GET", "/events"): (following.plain_follow, "/v1/games/<game_id:game_id>/events"),
}


class FastLane:
    """Wraps Flask's ``wsgi_app``; see the module docstring."""

    def __init__(self, app: WSGIApp, services: Services) -> None:
        self.app = app
        self.services = services
        self.max_body = services.config.max_body_bytes

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        match = GAME_PATH.fullmatch(environ.get("PATH_INFO", ""))
        if match is None:
            return self.app(environ, start_response)
        route = ROUTES.get((environ.get("REQUEST_METHOD", ""), match.group(2) or ""))
        if route is None:
            return self.app(environ, start_response)
        handler, template = route
        body = b""
        if match.group(2) == "/events":
            plain = following.plain_request(environ)
            if plain is None:  # an odd query or header: Flask checks it all
                return self.app(environ, start_response)
            environ[following.PLAIN_KEY] = plain
        elif environ["REQUEST_METHOD"] == "POST":
            body_or_none = self._read_body(environ)
            if body_or_none is None:
                return self.app(environ, start_response)
            body = body_or_none
        environ[ROUTE_KEY] = template
        # current until the middleware, around every request, resets it
        CURRENT_CALL.set(Call(environ, self.services, None, body))
        try:
            response = handler(match.group(1))
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
