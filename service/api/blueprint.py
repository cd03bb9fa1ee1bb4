"""The project's flask-smorest Blueprint: JSON bodies are parsed with orjson.

The standard library's parser raises RecursionError on deeply nested input
(``[[[[…`` thousands deep), which would surface as a 500; orjson refuses such
input as invalid JSON, answered 400 ``INVALID_JSON`` like every malformed body.
A body not declared as JSON is answered 415 (:mod:`service.api.media`).

Routes document their error answers with :func:`document_errors`: problem+json,
an example of each code, and the headers a problem carries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import flask
import flask_smorest
import orjson
from webargs import core
from webargs.flaskparser import FlaskParser

from service.api.media import is_json, require_json
from service.api.problems import CODES, PROBLEM_JSON, ApiError, code_for_status, problem_body
from service.api.schemas.headers import headers

F = TypeVar("F", bound=Callable[..., Any])


class OrjsonParser(FlaskParser):
    def load_json(self, req: flask.Request, schema: Any) -> Any:
        if not is_json(req.content_type):
            # a body not declared as JSON is refused (415); no body is no body
            require_json(req.content_type, req.content_length or len(req.get_data(cache=True)))
            return core.missing
        try:
            return orjson.loads(req.get_data(cache=True))
        except orjson.JSONDecodeError:
            raise ApiError("INVALID_JSON", "the body is not valid JSON") from None


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = OrjsonParser()


ERRORS_READ = {404: "Unknown game", 503: "Storage unavailable"}
ERRORS_PLAYER = {**ERRORS_READ, 401: "Missing or invalid token"}

EXAMPLE_CODES = {
    400: ("INVALID_JSON",),
    401: ("UNAUTHORIZED",),
    404: ("GAME_NOT_FOUND",),
    406: ("NOT_ACCEPTABLE",),
    409: ("CONFLICT",),
    412: ("PRECONDITION_FAILED",),
    422: ("VALIDATION_ERROR",),
    429: ("RATE_LIMITED",),
    503: ("STORE_UNAVAILABLE",),
}
"""The codes shown as examples of an error status, unless the operation names its own."""

EXAMPLES: dict[str, dict[str, Any]] = {
    "GAME_NOT_FOUND": {"detail": "no game with this id"},
    "UNAUTHORIZED": {"detail": "send Authorization: Bearer <token> for your seat"},
    "STORE_UNAVAILABLE": {"detail": "the game store is unreachable; retry shortly"},
    "INVALID_JSON": {"detail": "the body is not valid JSON"},
    "VALIDATION_ERROR": {
        "detail": "some fields are invalid; see errors",
        "errors": {"name": ["Missing data for required field."]},
    },
    "PRECONDITION_FAILED": {
        "detail": "If-Match names version 7, the game is at version 8",
        "current_version": 8,
    },
    "HISTORY_DIVERGED": {
        "detail": "If-Match names event 25 of a history the game no longer has (its store "
        "lost changes you saw): read it again",
        "current_version": 6,
        "shared_seq": 14,
        "shared_id": "14.9b2e0d41c07f3a85",
    },
    "RATE_LIMITED": {"detail": "rate limit exceeded (moves: 120 per 1 minute); retry after 12 s"},
    "APP_LIMIT_EXCEEDED": {
        "detail": "app limit: this player may make 600 such requests a minute "
        "(player_moves_per_minute); retry after 12 s",
        "limit": "player_moves_per_minute",
        "scope": "player",
    },
    "TOO_MANY_STREAMS": {
        "detail": "too many open streams on this seat (8 at most): close one, or retry after 41 s"
    },
    "NOT_YOUR_TURN": {"detail": "it is seat 1's turn"},
    "WRONG_PHASE": {"detail": "you have drawn already; discard or go out"},
    "CARD_NOT_IN_HAND": {
        "detail": "7H is not in your hand",
        "errors": {"card": ["7H is not in your hand"]},
    },
    "INVALID_OPTION": {
        "detail": "option 'aces' must be one of low, high_or_low",
        "errors": {"aces": ["option 'aces' must be one of low, high_or_low"]},
    },
}
"""Realistic details of the examples (else the title)."""

ERROR_HEADERS = {
    401: headers("WWW-Authenticate"),
    429: headers("Retry-After"),
    503: headers("Retry-After"),
}


def problem_examples(status: int, codes: tuple[str, ...]) -> dict[str, Any]:
    """The ``examples`` of a problem answer of ``status``: one per code."""
    named = [code for code in codes if CODES[code][0] == status] or EXAMPLE_CODES.get(
        status, (code_for_status(status),)
    )
    out = {}
    for code in named:
        example = dict(EXAMPLES.get(code, {"detail": CODES[code][1]}))
        detail = example.pop("detail")
        out[code] = {"summary": CODES[code][1], "value": problem_body(code, detail, **example)}
    return out


def document_errors(
    blueprint: Blueprint, codes: dict[int, str], *examples: str
) -> Callable[[F], F]:
    """Document error answers (problem+json) without wrapping the view: unlike
    ``alt_response`` this adds no per-request cost.  Each status is shown with
    an example of each code of ``examples`` it answers with (else of its usual
    code: :data:`EXAMPLE_CODES`), and with its headers (``Retry-After``...)."""
    responses = {}
    for status, description in codes.items():
        responses[str(status)] = {
            "description": description,
            "content": {
                PROBLEM_JSON: {
                    "schema": {"$ref": "#/components/schemas/Problem"},
                    "examples": problem_examples(status, examples),
                }
            },
            **({"headers": ERROR_HEADERS[status]} if status in ERROR_HEADERS else {}),
        }
    return blueprint.doc(responses=responses)
