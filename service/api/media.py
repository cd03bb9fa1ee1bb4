"""The media type a request body must be declared as: JSON.

Every endpoint taking a body reads it as JSON, and only a body declared as
JSON: ``Content-Type: application/json``, or a structured ``application/*+json``
type (RFC 6839), each with no parameter or ``charset=utf-8`` (JSON is UTF-8,
RFC 8259).  Any other declared type, or none, on a non-empty body is answered
415 ``UNSUPPORTED_MEDIA_TYPE`` before the body is parsed.  An empty body is no
body, whatever its headers: the endpoint then answers as it does without one.

>>> [is_json(t) for t in ("application/json", "application/json; charset=UTF-8",
...                       "application/merge-patch+json", "Application/JSON")]
[True, True, True, True]
>>> [is_json(t) for t in ("text/plain", "application/jsonx", "application/json; charset=latin-1",
...                       "application/+json", "", None)]
[False, False, False, False, False, False]
"""

from __future__ import annotations

import re

from service.api.problems import ApiError

JSON = "application/json"

_STRUCTURED = re.compile(r"application/[a-z0-9][a-z0-9!#$&^_.+-]{0,100}\+json")
_UTF8 = re.compile(r"""[ \t]*charset[ \t]*=[ \t]*(?:utf-8|"utf-8")[ \t]*""", re.IGNORECASE)


def is_json(content_type: str | None) -> bool:
    """True for a ``Content-Type`` declaring a JSON body (see the module doc)."""
    if content_type == JSON:  # what clients send: no parsing then
        return True
    if not content_type:
        return False
    mimetype, *params = content_type.split(";")
    mimetype = mimetype.strip(" \t").lower()
    if mimetype != JSON and not _STRUCTURED.fullmatch(mimetype):
        return False
    return all(_UTF8.fullmatch(param) for param in params)


def require_json(content_type: str | None, body_length: int) -> None:
    """Refuse (415) a non-empty body that is not declared as JSON."""
    if body_length and not is_json(content_type):
        raise ApiError(
            "UNSUPPORTED_MEDIA_TYPE",
            "send the body as JSON, with Content-Type: application/json",
        )
