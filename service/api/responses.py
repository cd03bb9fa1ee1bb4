"""The answers of the handlers: werkzeug ``Response``s with JSON bodies.

Every handler and every problem (:mod:`service.api.problems`) answers with a
Flask ``Response``; these build the JSON ones.  They carry only what the
handlers set (type, length, ``ETag``, a few named headers); the middleware
(:mod:`service.api.middleware`) adds the rest to every response alike.

>>> r = json_response({"ok": True}, etag='"3.9.5f0c1a2b3c4d5e6f"')
>>> r.status_code, r.get_data(), r.headers["ETag"]
(200, b'{"ok":true}', '"3.9.5f0c1a2b3c4d5e6f"')
>>> not_modified_response('"3.9.5f0c1a2b3c4d5e6f"').status_code
304
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from flask import Response

JSON = "application/json"


def json_response(
    body: Any,
    status: int = 200,
    *,
    etag: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """``body`` dumped with orjson (JSON text already made goes in as an
    ``orjson.Fragment``), with ``etag`` (:func:`service.api.etags.etag`)."""
    response = Response(orjson.dumps(body), status=status, content_type=JSON)
    if etag is not None:
        response.headers["ETag"] = etag
    if headers:
        response.headers.extend(headers)
    return response


def not_modified_response(etag: str) -> Response:
    """304 for ``etag``: no body, and no entity headers (werkzeug drops them
    when the response is sent), only the ETag."""
    return Response(status=304, headers={"ETag": etag})
