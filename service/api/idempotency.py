"""``Idempotency-Key``: the header that makes every write safe to retry.

What a key does -- the answer saved with the change and replayed to a retry --
is :mod:`service.hosting.saved_answers`; here the header is read and checked,
and a replay answered.
"""

from __future__ import annotations

import re

from flask import Response

from service.api.auth import bearer_token
from service.api.context import call
from service.api.etags import etag
from service.api.problems import ApiError
from service.api.responses import json_response
from service.hosting.saved_answers import Idempotency, replayed
from service.hosting.tokens import hash_token
from service.store.history import parse_event_id

IDEMPOTENCY_KEY_MAX = 255

SECRET_KEY_MIN_BITS = 128
"""The least a key of a request without a bearer token must carry (see :func:`key_bits`)."""

_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")


def key_bits(key: str) -> int:
    """The random bits a key can hold, judged by its form: 4 a character of a
    hex key (a UUID's hyphens aside), 6 of a base64url one, 0 for anything else
    or for a key of fewer than 8 distinct characters (``aaaa...``, ``0000...``).

    >>> key_bits("3f2b8c4e-9d1a-4f6b-8e2c-7a5d9b1c0e4f")  # a UUID
    128
    >>> key_bits("q8Zr2LxV0nWbT5yKpD3sHc")  # 16 random bytes, base64url
    132
    >>> key_bits("create-game-1"), key_bits("a" * 64), key_bits("a key")
    (78, 0, 0)
    """
    digits = key.replace("-", "")
    if len(set(digits)) < 8:
        return 0
    if _HEX.fullmatch(digits):
        return 4 * len(digits)
    if _BASE64URL.fullmatch(key):
        return 6 * len(key)
    return 0


def idempotency(scope: str, *, secret: bool = False) -> Idempotency | None:
    """The request's ``Idempotency-Key``, scoped (per game and player), if any.

    With ``secret`` (a request without a bearer token: a create or a join,
    whose answer holds tokens), the key is all that proves a replay is the
    client's own, so it must be a random one of at least
    :data:`SECRET_KEY_MIN_BITS` bits (a UUID, 32 hex digits, 22 base64url
    characters): a guessed key then never yields a token."""
    current = call()
    key = current.header("Idempotency-Key")
    if key is None:
        return None
    if not key or len(key) > IDEMPOTENCY_KEY_MAX:
        raise ApiError("BAD_REQUEST", f"Idempotency-Key must be 1 to {IDEMPOTENCY_KEY_MAX} chars")
    if secret and key_bits(key) < SECRET_KEY_MIN_BITS:
        raise ApiError(
            "WEAK_IDEMPOTENCY_KEY",
            "without a bearer token, Idempotency-Key must be random: a UUID, at least 32 hex "
            "digits or at least 22 base64url characters",
        )
    request = current.method.encode() + b"\0" + current.path.encode() + b"\0" + current.body()
    return Idempotency.of(scope, key, request)


def game_idempotency(game_id: str) -> Idempotency | None:
    """The request's key for a write to ``game_id``, scoped to the game and to the
    bearer token sent (so players' keys never meet); without a token it must be
    secret (see :func:`idempotency`)."""
    if call().header("Idempotency-Key") is None:  # else no token hash to compute
        return None
    token = bearer_token()
    scope = f"{game_id}\0{hash_token(token) if token else ''}"
    return idempotency(scope, secret=token is None)


def replay(idem: Idempotency, fingerprint: bytes, raw: bytes, last: bytes) -> Response:
    """Answer again what was answered first, with the ETag of its version (whose
    last event was ``last``, an event id), or 422 if the key was used otherwise."""
    saved = replayed(idem, fingerprint, raw)
    position = parse_event_id(last.decode())
    tag = None if saved.version is None or position is None else etag(saved.version, position)
    return json_response(
        saved.body,
        saved.status,
        etag=tag,
        headers={**saved.headers, "Idempotent-Replayed": "true"},
    )
