"""Every error the API answers, as RFC 9457 problem details, mapped in one place.

Handlers raise engine, lobby, store or :class:`ApiError` exceptions; the
handlers registered by :func:`register` turn them into
``application/problem+json`` answers with a stable ``code``.  The table
``CODES`` is the list ``docs/ERRORS.md`` is generated from (``make docs``).
"""

from __future__ import annotations

import logging
import math
from typing import Any

import orjson
from flask import Flask, Response
from werkzeug.exceptions import HTTPException

from service.api import metrics
from service.engine import errors as engine
from service.hosting.refusals import HostingError
from service.store import GameNotFound, NotDurable, StoreUnavailable, TooManyStreams

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
RETRY_AFTER_SECONDS = 1

# code -> (status, title): every code the API can answer with.
CODES: dict[str, tuple[int, str]] = {
    "BAD_REQUEST": (400, "Malformed request"),
    "INVALID_JSON": (400, "Request body is not valid JSON"),
    "VALIDATION_ERROR": (422, "Invalid fields"),
    "INVALID_OPTION": (422, "Invalid game options"),
    "MALFORMED": (422, "Malformed value"),
    "UNAUTHORIZED": (401, "Missing or invalid token"),
    "INVALID_CREDENTIAL": (401, "Unknown or revoked key or token"),
    "CREDENTIAL_EXPIRED": (401, "Expired token"),
    "CREDENTIAL_NOT_ALLOWED": (403, "Credential not allowed here"),
    "PLAYER_BARRED": (403, "Player barred by the app"),
    "NOT_FOUND": (404, "Not found"),
    "GAME_NOT_FOUND": (404, "Unknown game"),
    "METHOD_NOT_ALLOWED": (405, "Method not allowed"),
    "NOT_ACCEPTABLE": (406, "Not acceptable"),
    "NOT_YOUR_TURN": (409, "Not your turn"),
    "WRONG_PHASE": (409, "Wrong phase of the turn"),
    "GAME_NOT_IN_PROGRESS": (409, "Game not in progress"),
    "GAME_FULL": (409, "No open seat"),
    "CONFLICT": (409, "Concurrent change"),
    "PRECONDITION_FAILED": (412, "Version mismatch"),
    "HISTORY_DIVERGED": (412, "History changed"),
    "REQUEST_TIMEOUT": (408, "Request not received in time"),
    "PAYLOAD_TOO_LARGE": (413, "Request body too large"),
    "URI_TOO_LONG": (414, "Request line too long"),
    "UNSUPPORTED_MEDIA_TYPE": (415, "Send application/json"),
    "EXPECTATION_FAILED": (417, "Expectation not supported"),
    "HEADERS_TOO_LARGE": (431, "Request headers too large"),
    "CARD_NOT_IN_HAND": (422, "Card not in hand"),
    "INVALID_MELDS": (422, "Invalid melds"),
    "DISCARD_FORBIDDEN": (422, "Discard not allowed"),
    "DISCARD_EMPTY": (422, "Discard pile empty"),
    "STOCK_UNAVAILABLE": (422, "Stock unavailable"),
    "GO_OUT_FORBIDDEN": (422, "Going out not allowed now"),
    "ILLEGAL_MOVE": (422, "Illegal move"),
    "GAME_NOT_FINISHED": (409, "Game not finished"),
    "SEAT_ALREADY_CLAIMED": (409, "Seat already claimed"),
    "SEAT_NOT_RESERVED": (403, "No seat reserved for you"),
    "SEAT_TAKEN": (409, "Seat taken"),
    "ALREADY_SEATED": (409, "Player already seated in this game"),
    "NO_SUCH_SEAT": (422, "No such seat"),
    "GAME_STARTED": (409, "Game started"),
    "GAME_CANCELLED": (409, "Game cancelled"),
    "GAME_ABORTED": (409, "Game aborted by its app"),
    "PLAYER_NOT_SEATED": (404, "Player holds no seat of this game"),
    "RESIGNED": (409, "Seat resigned"),
    "LOBBY_BUSY": (503, "Lobby busy"),
    "IDEMPOTENCY_KEY_REUSED": (422, "Idempotency key reused with another request"),
    "WEAK_IDEMPOTENCY_KEY": (400, "Idempotency key not random enough"),
    "SEARCH_TOO_LARGE": (422, "Hand and table too large to evaluate"),
    "WEBHOOK_URL_REFUSED": (422, "Webhook URL refused"),
    "WEBHOOK_NOT_FOUND": (404, "No webhook"),
    "DELIVERY_NOT_FOUND": (404, "No such delivery"),
    "RATE_LIMITED": (429, "Too many requests"),
    "APP_LIMIT_EXCEEDED": (429, "Over a limit of the app"),
    "TOO_MANY_STREAMS": (429, "Too many open streams"),
    "STORE_UNAVAILABLE": (503, "Storage unavailable"),
    "INTERNAL": (500, "Internal error"),
    "NOT_IMPLEMENTED": (501, "Not implemented"),
    # Answered by the shipped load balancer (deploy/nginx.conf), in the same form.
    "BAD_GATEWAY": (502, "No instance answered"),
    "SERVICE_UNAVAILABLE": (503, "Service unavailable"),
    "GATEWAY_TIMEOUT": (504, "No answer in time"),
}

STATUS_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    408: "REQUEST_TIMEOUT",
    409: "CONFLICT",
    412: "PRECONDITION_FAILED",
    413: "PAYLOAD_TOO_LARGE",
    414: "URI_TOO_LONG",
    415: "UNSUPPORTED_MEDIA_TYPE",
    417: "EXPECTATION_FAILED",
    422: "VALIDATION_ERROR",
    429: "RATE_LIMITED",
    431: "HEADERS_TOO_LARGE",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "STORE_UNAVAILABLE",
}
"""The code of an error answered by its HTTP status alone (werkzeug's exceptions,
and what gunicorn answers by itself: :mod:`service.serving`)."""


def code_for_status(status: int) -> str:
    """The code for an HTTP error status (any other 4xx is ``BAD_REQUEST``, 5xx ``INTERNAL``)."""
    return STATUS_CODES.get(status, "BAD_REQUEST" if status < 500 else "INTERNAL")


class ApiError(Exception):
    """An error answer decided by the HTTP layer itself (auth, preconditions...)."""

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ):
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def problem_body(
    code: str, detail: str, *, status: int | None = None, **extra: Any
) -> dict[str, Any]:
    """The problem details of ``code`` (the body of :func:`problem`, and the spec's examples).

    >>> problem_body("GAME_NOT_FOUND", "no game with this id")["type"]
    'https://three-thirteen.dev/problems/game-not-found'
    """
    default_status, title = CODES.get(code, (status or 500, code.replace("_", " ").title()))
    return {
        "type": f"https://three-thirteen.dev/problems/{code.lower().replace('_', '-')}",
        "title": title,
        "status": status or default_status,
        "detail": detail,
        "code": code,
        **extra,
    }


def problem(
    code: str,
    detail: str,
    *,
    status: int | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> Response:
    """The problem+json response for ``code`` (counted in the metrics): what every
    error answer is, including those the server writes for requests it cannot
    parse (:mod:`service.serving`)."""
    body = problem_body(code, detail, status=status, **extra)
    status = body["status"]
    metrics.ERRORS.labels(code).inc()
    # OPT_NON_STR_KEYS: marshmallow keys errors of list items by index (an int)
    payload = orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
    response = Response(payload, status=status, mimetype=PROBLEM_JSON)
    if headers:
        response.headers.extend(headers)
    return response


def _field_errors(exc: engine.EngineError) -> dict[str, Any]:
    return {"errors": {exc.field: [exc.message]}} if exc.field else {}


def engine_problem(exc: engine.EngineError) -> Response:
    """Map an engine or lobby error to its answer."""
    if isinstance(exc, HostingError):
        code = exc.code if exc.code in CODES else "CONFLICT"
        headers = None if exc.retry_after is None else {"Retry-After": str(exc.retry_after)}
        return problem(
            code,
            exc.message,
            status=CODES[code][0],
            headers=headers,
            **_field_errors(exc),
            **exc.extra(),
        )
    if isinstance(exc, engine.StateConflictError):
        code = exc.code if exc.code in CODES else "CONFLICT"
        return problem(code, exc.message, status=CODES[code][0], **_field_errors(exc))
    if isinstance(exc, engine.MalformedError):
        code = exc.code if exc.code in CODES else "MALFORMED"
        return problem(code, exc.message, status=422, **_field_errors(exc))
    if isinstance(exc, engine.IllegalMoveError):
        code = exc.code if exc.code in CODES else "ILLEGAL_MOVE"
        return problem(code, exc.message, status=422, **_field_errors(exc))
    log.error("unmapped engine error %s", type(exc).__name__)
    return problem("INTERNAL", "internal error")


def _http_problem(exc: HTTPException) -> Response:
    status = exc.code or 500
    code = code_for_status(status)
    extra: dict[str, Any] = {}
    data = getattr(exc, "data", None)
    if isinstance(data, dict) and data.get("messages"):
        messages = data["messages"]
        # webargs nests messages by location ("json", "query", ...)
        if isinstance(messages, dict) and len(messages) == 1:
            messages = next(iter(messages.values()))
        extra["errors"] = messages
    detail = exc.description or CODES[code][1]
    if status == 422 and "errors" in extra:
        detail = "some fields are invalid; see errors"
    headers = {}
    if status == 405 and exc.get_response().headers.get("Allow"):
        headers["Allow"] = exc.get_response().headers["Allow"]
    if status == 429:
        headers["Retry-After"] = str(getattr(exc, "retry_after", 1) or 1)
    return problem(code, detail, status=status, headers=headers, **extra)


def too_many_streams(exc: TooManyStreams) -> Response:
    """429 for a stream over its address's or its seat's cap (:mod:`service.api.stream_caps`).

    >>> answer = too_many_streams(TooManyStreams("seat", 8, 12.3))
    >>> answer.status_code, answer.headers["Retry-After"], answer.get_json()["detail"]
    (429, '13', 'too many open streams on this seat (8 at most): close one, or retry after 13 s')
    """
    wait = max(1, math.ceil(exc.retry_after))
    where = "from this address" if exc.holder == "address" else "on this seat"
    return problem(
        "TOO_MANY_STREAMS",
        f"too many open streams {where} ({exc.cap} at most): close one, or retry after {wait} s",
        headers={"Retry-After": str(wait)},
    )


def answer_for(exc: Exception) -> Response:
    """The answer to an exception raised while handling a request: the one
    mapping used by Flask's error handlers and by the fast lane."""
    if isinstance(exc, ApiError):
        return problem(exc.code, exc.detail, headers=exc.headers, **exc.extra)
    if isinstance(exc, engine.EngineError):
        return engine_problem(exc)
    if isinstance(exc, GameNotFound):
        return problem("GAME_NOT_FOUND", "no game with this id")
    if isinstance(exc, TooManyStreams):
        return too_many_streams(exc)
    if isinstance(exc, NotDurable):
        return problem(
            "STORE_UNAVAILABLE",
            f"the change was made but not confirmed to last ({exc}): it may or may not "
            "persist. Retry with the same Idempotency-Key: the change is made once either way",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    if isinstance(exc, StoreUnavailable):
        return problem(
            "STORE_UNAVAILABLE",
            "the game store is unreachable; retry shortly",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    if isinstance(exc, HTTPException):
        return _http_problem(exc)
    log.exception("unhandled error", exc_info=exc)
    return problem("INTERNAL", "internal error; it has been logged")


def register(app: Flask) -> None:
    """Install :func:`answer_for` as the app's error handler: for every exception,
    and for HTTPException too, replacing the handler flask-smorest registered."""
    app.register_error_handler(HTTPException, answer_for)
    app.register_error_handler(Exception, answer_for)
