"""What every response gets, done once at the WSGI level: a request id, the
security headers, CORS (when configured: :mod:`service.api.cors`), the request metrics, and the
request's Redis budget (``REDIS_TIMEOUT_SECONDS``, :mod:`service.store.budget`);
and what every request gets: a body of known length, at most ``MAX_BODY_BYTES``.

A body sent without a length (``Transfer-Encoding: chunked``) is read here, at
most one byte past the limit: over it, the answer is 413 and nothing else runs;
within it, the request goes on as if it had been sent with its
``Content-Length``, so the fast lane and Flask see one kind of body only, always
bounded.

A WSGI wrapper costs far less per request than a chain of Flask hooks, which
matters on the hot paths (a 304 answer does little else).
"""

from __future__ import annotations

import io
import random
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from service.api import metrics
from service.api.context import CURRENT_CALL
from service.api.cors import Cors
from service.api.problems import problem
from service.logs import CURRENT_REQUEST, REQUEST_ID_KEY
from service.store.budget import close_budget, open_budget

REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")

SECURITY_HEADERS = [
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
]
API_CSP = ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
DOCS_CSP = (
    "Content-Security-Policy",
    "default-src 'self'; img-src 'self' data:; "
    "style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'",
)

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class Starter:
    """The ``start_response`` the app is given: it adds the middleware's headers
    (those the app did not set) and keeps the status.  A slotted object, not a
    closure: it lives as long as its request, a waiting one too."""

    __slots__ = ("start_response", "extra", "status")

    def __init__(self, start_response: StartResponse, extra: list[tuple[str, str]]) -> None:
        self.start_response = start_response
        self.extra = extra
        self.status: str | None = None

    def __call__(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        self.status = status
        present = {name.lower() for name, _ in headers}
        headers.extend(h for h in self.extra if h[0].lower() not in present)
        return self.start_response(status, headers, exc_info)


class Middleware:
    """Wraps the Flask app's ``wsgi_app``."""

    def __init__(
        self,
        app: WSGIApp,
        cors: Cors | None = None,
        redis_timeout: float = 2.0,
        max_body: int | None = None,
    ) -> None:
        self.app = app
        self.redis_timeout = redis_timeout
        self.max_body = max_body
        self.cors = cors
        self.api_headers = [*SECURITY_HEADERS, API_CSP]
        self.docs_headers = [*SECURITY_HEADERS, DOCS_CSP]

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        started = time.perf_counter()
        given = environ.get("HTTP_X_REQUEST_ID", "")
        # unique, not secret: the process's generator (reseeded in each forked worker)
        request_id = given if REQUEST_ID.fullmatch(given) else f"{random.getrandbits(128):032x}"
        environ[REQUEST_ID_KEY] = request_id
        docs = environ.get("PATH_INFO", "").startswith("/docs")
        extra = [("X-Request-ID", request_id), *(self.docs_headers if docs else self.api_headers)]
        if self.cors is not None:
            extra += self.cors.headers(environ)
        start = Starter(start_response, extra)
        bound = CURRENT_REQUEST.set(environ)
        bound_call = CURRENT_CALL.set(None)  # made by the fast lane or on first use
        redis_budget = open_budget(self.redis_timeout)  # all the request's Redis waits
        try:
            if self.max_body is not None and not _buffer_unsized_body(environ, self.max_body):
                too_large = problem("PAYLOAD_TOO_LARGE", f"the body is over {self.max_body} bytes")
                return too_large(environ, start)
            return self.app(environ, start)
        finally:
            close_budget(redis_budget)
            CURRENT_CALL.reset(bound_call)
            CURRENT_REQUEST.reset(bound)
            metrics.observe(
                environ.get("REQUEST_METHOD", "GET"),
                environ.get(metrics.ROUTE_KEY, "<unmatched>"),
                start.status.split(" ", 1)[0] if start.status else "500",
                time.perf_counter() - started,
                timed=metrics.FOLLOWING_KEY not in environ,
                app=metrics.app_of(environ),
            )


def _buffer_unsized_body(environ: dict[str, Any], limit: int) -> bool:
    """Read a body sent with ``Transfer-Encoding`` (chunked: the server decodes
    and ends the stream) into memory; False when it is over ``limit``.  Other
    requests are left as they are (Flask's ``MAX_CONTENT_LENGTH`` and the fast
    lane check their ``Content-Length``)."""
    if not environ.get("HTTP_TRANSFER_ENCODING"):
        return True
    stream = environ.get("wsgi.input")
    chunks: list[bytes] = []
    size = 0
    while stream is not None and size <= limit:
        chunk = stream.read(min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        return False
    body = b"".join(chunks)
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ.pop("HTTP_TRANSFER_ENCODING", None)  # the body is now sized
    return True
