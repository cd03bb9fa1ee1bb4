"""The headers of the HTTP contract, declared in the spec as named components:
the request headers an operation reads as header parameters, the headers it
answers with as response headers (:func:`parameters`, :func:`headers`)."""

from __future__ import annotations

from typing import Any

from apispec import APISpec

from service.api.idempotency import IDEMPOTENCY_KEY_MAX

PARAMETERS: dict[str, dict[str, Any]] = {
    "If-Match": {
        "description": 'Act only on this state of the game (its ETag, `"<version>.<event id>"`; '
        'a bare `"<version>"` is taken on trust): else 412 PRECONDITION_FAILED (another '
        "version) or HISTORY_DIVERGED (a history the game no longer has), and nothing changes",
        "schema": {"type": "string"},
        "example": '"7.27.5f0c1a2b3c4d5e6f"',
    },
    "If-None-Match": {
        "description": "The ETag of the state you have: 304 Not Modified while it is current",
        "schema": {"type": "string"},
        "example": '"7.27.5f0c1a2b3c4d5e6f"',
    },
    "Idempotency-Key": {
        "description": "Makes a retry safe: the same key and body are answered the first "
        "answer again, without acting twice. Without a bearer token, a random key (a UUID)",
        "schema": {"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX},
        "example": "3f2b8c4e-9d1a-4f6b-8e2c-7a5d9b1c0e4f",
    },
}

HEADERS: dict[str, dict[str, Any]] = {
    "ETag": {
        "description": 'The game\'s state, `"<version>.<event id>"`: its version and its last '
        "event's id (for If-Match, If-None-Match)",
        "schema": {"type": "string"},
    },
    "Location": {"description": "The game's URL", "schema": {"type": "string"}},
    "Retry-After": {
        "description": "Seconds to wait before trying again",
        "schema": {"type": "integer"},
    },
    "Idempotent-Replayed": {
        "description": "Present (`true`) on the answer to a retry, given again",
        "schema": {"type": "string", "enum": ["true"]},
    },
    "Link": {
        "description": 'The next page, `<url>; rel="next"` (absent on the last page)',
        "schema": {"type": "string"},
    },
    "WWW-Authenticate": {
        "description": 'The scheme to use: `Bearer realm="games"`',
        "schema": {"type": "string"},
    },
}


def _component_id(header: str) -> str:
    return header.replace("-", "")


def parameters(*names: str) -> list[str]:
    """The header parameters ``names`` (for ``blp.doc(parameters=...)``; apispec
    makes each component id a reference)."""
    assert set(names) <= set(PARAMETERS), names
    return [_component_id(name) for name in names]


def headers(*names: str) -> dict[str, dict[str, str]]:
    """References to the response headers ``names`` (for a response's ``headers``)."""
    assert set(names) <= set(HEADERS), names
    return {name: {"$ref": f"#/components/headers/{_component_id(name)}"} for name in names}


def register_spec(spec: APISpec) -> None:
    for name, parameter in PARAMETERS.items():
        spec.components.parameter(
            _component_id(name), "header", {"name": name, "required": False, **parameter}
        )
    for name, header in HEADERS.items():
        spec.components.header(_component_id(name), header)
