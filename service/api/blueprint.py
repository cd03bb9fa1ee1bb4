"""The project's flask-smorest Blueprint: JSON bodies are parsed with orjson.

The standard library's parser raises RecursionError on deeply nested input
(``[[[[…`` thousands deep), which would surface as a 500; orjson refuses such
input as invalid JSON, answered 400 ``INVALID_JSON`` like every malformed body.
A body not declared as JSON is answered 415 (:mod:`service.api.media`).
"""

from __future__ import annotations

from typing import Any

import flask
import flask_smorest
import orjson
from webargs import core
from webargs.flaskparser import FlaskParser

from service.api.media import is_json, require_json
from service.api.problems import PROBLEM_JSON, ApiError


class OrjsonParser(FlaskParser):
    def _raw_load_json(self, req: flask.Request) -> Any:
        if not is_json(req.content_type):
            # a body not declared as JSON is refused (415); no body is no body
            require_json(req.content_type, req.content_length or len(req.get_data(cache=True)))
            return core.missing
        try:
            return orjson.loads(req.get_data(cache=True))
        except orjson.JSONDecodeError:
            raise ApiError("INVALID_JSON", "the body is not valid JSON") from None


class Blueprint(flask_smorest.Blueprint):  # type: ignore[misc]
    ARGUMENTS_PARSER = OrjsonParser()


ERRORS_READ = {404: "Unknown game", 503: "Storage unavailable"}
ERRORS_PLAYER = {**ERRORS_READ, 401: "Missing or invalid token"}


PROBLEM_CONTENT = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}


def document_errors(blueprint: Blueprint, codes: dict[int, str]) -> Any:
    """Document error answers (problem+json) without wrapping the view: unlike
    ``alt_response`` this adds no per-request cost."""
    return blueprint.doc(
        responses={
            str(status): {"description": description, "content": PROBLEM_CONTENT}
            for status, description in codes.items()
        }
    )
