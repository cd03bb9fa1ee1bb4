"""Finished answers of the hot handlers: status, headers and body bytes.

Building a werkzeug ``Response`` (its header object, mimetype and status
parsing) and taking it apart again for WSGI costs about as much as the rest
of a 304 answer.  The handlers that the fast lane (:mod:`service.api.fastlane`)
serves -- views, moves and the changes they share -- return an :class:`Answer`
instead: the fast lane starts it as it is, and the Flask views turn it into a
``Response`` with :meth:`Answer.response`.  Answers carry only what the
handlers set (type, length, ``ETag``, a few named headers); the middleware
adds the rest to every response alike.

>>> a = json_answer({"ok": True}, version=3)
>>> a.status, a.body, a.headers[-1]
(200, b'{"ok":true}', ('ETag', '"3"'))
>>> not_modified_answer(3).headers
[('ETag', '"3"')]
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

import orjson
from flask import Response

from service.api.middleware import StartResponse

STATUS_LINES = {status.value: f"{status.value} {status.phrase}" for status in HTTPStatus}


class Answer:
    """An HTTP answer, ready to send: ``status``, ``headers`` (a fresh list,
    which the middleware extends) and ``body``."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes = b"") -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def start(self, start_response: StartResponse) -> list[bytes]:
        """Start the answer on a WSGI server; its body chunks."""
        start_response(STATUS_LINES[self.status], self.headers)
        return [self.body] if self.body else []

    def response(self) -> Response:
        """The same answer as a Flask ``Response`` (for the Flask views)."""
        return Response(self.body or None, status=self.status, headers=self.headers)

    def json(self) -> Any:
        """The body, parsed (for tests and replays)."""
        return orjson.loads(self.body)


def raw_json_answer(
    body: bytes,
    status: int = 200,
    *,
    version: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> Answer:
    """An answer whose body is JSON text already; ``version`` adds the ETag."""
    out = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    if version is not None:
        out.append(("ETag", f'"{version}"'))
    if headers:
        out += headers.items()
    return Answer(status, out, body)


def json_answer(
    body: Any,
    status: int = 200,
    *,
    version: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> Answer:
    """A JSON answer dumped with orjson; ``version`` adds the ETag."""
    return raw_json_answer(orjson.dumps(body), status, version=version, headers=headers)


def not_modified_answer(version: int) -> Answer:
    """304 for ``version``: no body and no entity headers, only the ETag."""
    return Answer(304, [("ETag", f'"{version}"')])


def json_response(body: Any, status: int = 200, **answer: Any) -> Response:
    """:func:`json_answer` (``version``, ``headers``) as a Flask ``Response``, for
    the Flask views."""
    return json_answer(body, status, **answer).response()
