"""Structured JSON logs with a request id on every line.

The request id comes from ``X-Request-ID`` when the client (or the load
balancer) sends a sane one, else it is made here; it is echoed in the
response.  Tokens and request bodies are never logged.
"""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar
from typing import Any

import orjson

REQUEST_ID_KEY = "t13.request_id"  # set by service.api.middleware

CURRENT_REQUEST: ContextVar[dict[str, Any] | None] = ContextVar("t13_request", default=None)
"""The WSGI environ of the request being answered (set by the middleware)."""


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
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
    """Send the service's logs to stderr as JSON (idempotent)."""
    logger = logging.getLogger("service")
    logger.setLevel(level.upper())
    if not any(getattr(h, "_t13", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        handler._t13 = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.propagate = False
