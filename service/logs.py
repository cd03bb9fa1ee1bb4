"""Structured JSON logs with a request id on every line.

The request id comes from ``X-Request-ID`` when the client (or the load
balancer) sends a sane one, else it is made here; it is echoed in the
response.  Tokens and request bodies are never logged.

Every line's ``time`` is :func:`timestamp`'s: ISO 8601 to the second with the
UTC offset, as nginx's ``$time_iso8601`` writes it (deploy/nginx.conf's access
log), so the app's lines, gunicorn's access log and the load balancer's sort
and join alike.  Access-log lines (:func:`access_line`) carry numbers as
numbers.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable
from contextvars import ContextVar
from datetime import datetime
from typing import Any
from urllib.parse import unquote_plus

import orjson

REQUEST_ID_KEY = "t13.request_id"  # set by service.api.middleware

CURRENT_REQUEST: ContextVar[dict[str, Any] | None] = ContextVar("t13_request", default=None)
"""The WSGI environ of the request being answered (set by the middleware)."""


def timestamp(epoch: float) -> str:
    """``epoch`` in local time with its UTC offset, to the second (nginx's ``$time_iso8601``).

    >>> import re
    >>> bool(re.fullmatch(r"[-0-9]{10}T[:0-9]{8}[+-][0-9]{2}:[0-9]{2}", timestamp(0)))
    True
    """
    return datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


TICKET_PARAMETER = "ticket"
"""The query parameter of a stream ticket (a credential: never logged)."""


def redacted_query(query: str) -> str:
    """``query`` with the value of each parameter named ``ticket`` once decoded (as
    the app decodes it: ``%74icket`` is ``ticket`` too) replaced by ``<redacted>``.

    >>> redacted_query("after=3&ticket=s3cret&%74icket=s3cret&t%69cket&noticket=x")
    'after=3&ticket=<redacted>&%74icket=<redacted>&t%69cket&noticket=x'
    """
    if "ticket" not in query.lower() and "%" not in query:
        return query
    parts = query.split("&")
    for i, part in enumerate(parts):
        name, sep, _value = part.partition("=")
        if sep and unquote_plus(name, errors="replace") == TICKET_PARAMETER:
            parts[i] = f"{name}=<redacted>"
    return "&".join(parts)


def access_line(
    environ: dict[str, Any],
    status: int | None,
    sent: int | None,
    headers: Iterable[tuple[str, str]],
    seconds: float,
    now: float,
) -> str:
    """One access-log line: the answered request's JSON, with numbers as numbers,
    no header but the user agent and the request id the app answered with, and a
    stream ticket masked.

    >>> environ = {"REMOTE_ADDR": "10.0.0.7", "REQUEST_METHOD": "GET",
    ...            "PATH_INFO": "/v1/games/x/events", "QUERY_STRING": "ticket=s3cret&after=3"}
    >>> line = orjson.loads(access_line(environ, 200, 512, [("X-Request-ID", "r1")], 0.0123, 0))
    >>> line["status"], line["bytes"], line["duration_ms"], line["request_id"], line["query"]
    (200, 512, 12, 'r1', 'ticket=<redacted>&after=3')
    """
    query = environ.get("QUERY_STRING") or ""
    request_id = next((v for k, v in headers if k.lower() == "x-request-id"), None)
    entry = {
        "time": timestamp(now),
        "remote": environ.get("REMOTE_ADDR"),
        "method": environ.get("REQUEST_METHOD"),
        "path": environ.get("PATH_INFO"),
        "query": redacted_query(query),
        "status": status,
        "bytes": sent or 0,
        "duration_ms": int(seconds * 1000),
        "user_agent": environ.get("HTTP_USER_AGENT"),
        "request_id": request_id,
        "pid": os.getpid(),
    }
    return orjson.dumps(entry).decode()


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": timestamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        environ = CURRENT_REQUEST.get()
        if environ is not None:
            entry["request_id"] = environ.get(REQUEST_ID_KEY)
            entry["method"] = environ.get("REQUEST_METHOD")
            entry["path"] = environ.get("PATH_INFO")
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


def configure(level: str) -> None:
    """Send the service's logs to stderr as JSON (idempotent).

    Records do not name their thread (the JSON lines never showed it): under
    gevent, asking for the current thread's name makes a dummy thread object
    for each greenlet that logs -- every connection, through the access log
    -- which then lives as long as the connection."""
    logging.logThreads = False
    logger = logging.getLogger("service")
    logger.setLevel(level.upper())
    if not any(getattr(h, "_t13", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        handler._t13 = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.propagate = False
