"""Cross-origin requests (``CORS_ORIGINS``): what a page on another origin may send
and read, derived once, when the app is built, from what the API documents.

- the methods: every method of the route table (Flask's ``url_map``);
- the request headers: every header parameter of the spec, ``Authorization`` for
  its bearer security scheme, ``Content-Type`` when an operation takes a body
  (``application/json`` is not a CORS-safelisted type), and ``X-Request-ID``,
  which the middleware reads on every request;
- the exposed response headers: every response header of the spec, and
  ``X-Request-ID``, which the middleware adds to every answer.

A preflight (``OPTIONS`` with ``Access-Control-Request-Method``) from an allowed
origin is answered the allowed methods and headers and
``Access-Control-Max-Age`` (:data:`MAX_AGE_SECONDS`); any other answer to an
allowed origin names the headers the page may read.  An origin not allowed gets
no CORS header at all, so its browser refuses the answer (and the preflight).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from werkzeug.routing import Map

MAX_AGE_SECONDS = 7200
"""How long a browser may cache a preflight: Chromium's cap (Firefox allows 24 h).
The lists change only with a deployment, and a cached answer can only lack what a
newer deployment added, which the browser then preflights again: so the longest
cache costs nothing, and saves a preflight before each move sent with ``If-Match``
or ``Idempotency-Key`` (182 of them for a 182-move game, before)."""

REQUEST_ID = "X-Request-ID"
"""Read and answered by the middleware on every request, whatever the route."""

NO_PREFLIGHT_METHODS = frozenset({"OPTIONS"})
"""A preflight is itself never preflighted."""


@dataclass(frozen=True)
class CorsPolicy:
    """What an allowed origin may do, as the header values to send."""

    methods: tuple[str, ...]
    request_headers: tuple[str, ...]
    exposed_headers: tuple[str, ...]

    @classmethod
    def derive(cls, url_map: Map, spec: dict[str, Any]) -> CorsPolicy:
        """The policy for the routes of ``url_map``, documented by ``spec`` (OpenAPI 3.0)."""
        methods = {m for rule in url_map.iter_rules() for m in rule.methods or ()}
        return cls(
            methods=tuple(sorted(methods - NO_PREFLIGHT_METHODS)),
            request_headers=_sorted({*spec_request_headers(spec), REQUEST_ID}),
            exposed_headers=_sorted({*spec_response_headers(spec), REQUEST_ID}),
        )

    def preflight_headers(self) -> list[tuple[str, str]]:
        """The headers of a preflight's answer (besides the origin's)."""
        return [
            ("Access-Control-Allow-Methods", ", ".join(self.methods)),
            ("Access-Control-Allow-Headers", ", ".join(self.request_headers)),
            ("Access-Control-Max-Age", str(MAX_AGE_SECONDS)),
        ]

    def answer_headers(self) -> list[tuple[str, str]]:
        """The headers of any other answer (besides the origin's)."""
        return [("Access-Control-Expose-Headers", ", ".join(self.exposed_headers))]


class Cors:
    """The CORS headers for a request, for the middleware: none unless its
    ``Origin`` is one of ``origins`` (or ``origins`` holds ``*``)."""

    def __init__(self, origins: Iterable[str], policy: CorsPolicy) -> None:
        self.origins = frozenset(origins)
        self.any_origin = "*" in self.origins
        self._preflight = policy.preflight_headers()
        self._answer = policy.answer_headers()

    def headers(self, environ: dict[str, Any]) -> list[tuple[str, str]]:
        origin = environ.get("HTTP_ORIGIN")
        if not origin or not (self.any_origin or origin in self.origins):
            return []
        preflight = (
            environ.get("REQUEST_METHOD") == "OPTIONS"
            and "HTTP_ACCESS_CONTROL_REQUEST_METHOD" in environ
        )
        return [
            ("Access-Control-Allow-Origin", origin),
            ("Vary", "Origin"),
            *(self._preflight if preflight else self._answer),
        ]


def spec_request_headers(spec: dict[str, Any]) -> set[str]:
    """The request headers ``spec``'s operations read: their header parameters,
    ``Authorization`` for an ``http`` security scheme, ``Content-Type`` for a body."""
    found: set[str] = set()
    for operation in _operations(spec):
        for parameter in operation.get("parameters", []):
            parameter = _resolve(spec, parameter)
            if parameter.get("in") == "header":
                found.add(parameter["name"])
        if "requestBody" in operation:
            found.add("Content-Type")
    for scheme in spec.get("components", {}).get("securitySchemes", {}).values():
        if scheme.get("type") == "http":
            found.add("Authorization")
        elif scheme.get("type") == "apiKey" and scheme.get("in") == "header":
            found.add(scheme["name"])
    return found


def spec_response_headers(spec: dict[str, Any]) -> set[str]:
    """The response headers ``spec``'s operations document."""
    return {
        name
        for operation in _operations(spec)
        for response in operation.get("responses", {}).values()
        for name in _resolve(spec, response).get("headers", {})
    }


HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def _operations(spec: dict[str, Any]) -> Iterable[dict[str, Any]]:
    """Each operation of ``spec``, with its path's parameters added to its own."""
    for item in spec.get("paths", {}).values():
        shared = item.get("parameters", [])
        for method in HTTP_METHODS:
            operation = item.get(method)
            if operation is not None:
                yield {**operation, "parameters": [*shared, *operation.get("parameters", [])]}


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node``, or what its local ``$ref`` names."""
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node
    found: Any = spec
    for part in ref.removeprefix("#/").split("/"):
        found = found[part]
    return _resolve(spec, found)


def _sorted(names: set[str]) -> tuple[str, ...]:
    return tuple(sorted(names, key=str.lower))
