"""Idempotency: the answer of a keyed write, saved with its change and replayed.

A keyed write -- a create, a join, a move, an autopilot or rematch request --
saves its answer in the same atomic store write that makes its change (the game's
idempotency records, see :mod:`service.store.game_store`), tokens masked
(:mod:`service.hosting.token_masking`).  A retry with the same key finds that
answer when it reads the game, or when its own write is refused for it
(:class:`~service.store.IdempotentReplay`), and is answered it again
(:func:`replayed`); a key used with another request is refused.  How the key
reaches the service (the ``Idempotency-Key`` header) is the API's business
(:mod:`service.api.idempotency`).

>>> idem = Idempotency.of("game-1", "3f2b8c4e-9d1a-4f6b", b"POST /moves {}")
>>> key_hash, fingerprint, raw = idem.record(200, {"token": "t"}, 7)
>>> replayed(idem, fingerprint, raw).body, replayed(idem, fingerprint, raw).version
({'token': 't'}, 7)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from service.hosting.refusals import IdempotencyKeyReusedError
from service.hosting.token_masking import mask_tokens, unmask_tokens


@dataclass(frozen=True, slots=True)
class Idempotency:
    """The key of a request: the hash naming its record, the request's
    fingerprint, and a secret that masks tokens in the saved answer (derived
    from the key itself, which is never stored, so tokens saved for a replay are
    unreadable without the key)."""

    key_hash: str
    fingerprint: bytes
    mask_secret: bytes

    @classmethod
    def of(cls, scope: str, key: str, request: bytes) -> Idempotency:
        """The idempotency of ``key`` sent in ``scope`` (a game and a token, a
        create...) with ``request`` (what makes two requests the same one)."""
        return cls(
            hashlib.sha256(f"{scope}\0{key}".encode()).hexdigest(),
            hashlib.sha256(request).digest(),
            hashlib.sha256(f"mask\0{scope}\0{key}".encode()).digest(),
        )

    def record(
        self, status: int, body: Any, version: int, **extra: Any
    ) -> tuple[str, bytes, bytes]:
        """The record a write saves with its change: ``(key hash, fingerprint,
        answer)``, the answer's tokens masked."""
        saved = {"status": status, "body": mask_tokens(body, self.mask_secret), "version": version}
        return self.key_hash, self.fingerprint, orjson.dumps({**saved, **extra})


@dataclass(frozen=True, slots=True)
class SavedAnswer:
    """An answer saved under a key, its tokens unmasked."""

    status: int
    body: Any
    version: int | None
    headers: dict[str, str]


def replayed(idem: Idempotency, fingerprint: bytes, raw: bytes) -> SavedAnswer:
    """The answer saved (``raw``) for the request of ``fingerprint``, for a retry
    of it; :class:`IdempotencyKeyReusedError` if ``idem`` is another request's."""
    if fingerprint != idem.fingerprint:
        raise IdempotencyKeyReusedError("this Idempotency-Key was used with a different request")
    saved = orjson.loads(raw)
    return SavedAnswer(
        saved["status"],
        unmask_tokens(saved["body"], idem.mask_secret),
        saved.get("version"),
        dict(saved.get("headers") or {}),
    )
