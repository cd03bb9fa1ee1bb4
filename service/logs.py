"""Structured JSON logs with a request id on every line.

The request id comes from ``X-Request-ID`` when the client (or the load
balancer) sends a sane one, else it is made here; it is echoed in the
response.  Tokens and request bodies are never logged.
"""

from __future__ import annotations

import logging
import sys

import orjson
from flask import has_request_context, request

REQUEST_ID_KEY = "t13.request_id"  # set by service.api.middleware


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if has_request_context():
            entry["request_id"] = request.environ.get(REQUEST_ID_KEY)
            entry["method"] = request.method
            entry["path"] = request.path
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
