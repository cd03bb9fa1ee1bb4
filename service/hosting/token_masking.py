"""Tokens in a saved answer, masked: an answer saved for idempotent replays may
hold bearer tokens (a create's, a join's); they are stored XORed with a pad
derived from a secret that only the client's ``Idempotency-Key`` yields, so the
saved answer is unreadable without the key."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any


def mask_tokens(body: Any, secret: bytes) -> Any:
    """``body`` with its tokens masked (hex text) by ``secret``."""
    return _map_tokens(
        body, lambda token, i: _xor(token.encode(), _pad(secret, i, len(token))).hex()
    )


def unmask_tokens(body: Any, secret: bytes) -> Any:
    """``body`` with the tokens :func:`mask_tokens` masked readable again."""
    return _map_tokens(
        body,
        lambda hexed, i: _xor(bytes.fromhex(hexed), _pad(secret, i, len(hexed) // 2)).decode(),
    )


def _pad(secret: bytes, index: int, length: int) -> bytes:
    return hashlib.shake_256(secret + str(index).encode()).digest(length)


def _xor(data: bytes, pad: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, pad, strict=True))


def _map_tokens(body: Any, func: Callable[[str, int], str]) -> Any:
    """Apply ``func`` to the answer's tokens (``token`` at the top, in ``players`` or in
    ``webhook``: the token that reads a webhook's log)."""
    if not isinstance(body, dict):
        return body
    out = dict(body)
    if isinstance(out.get("token"), str):
        out["token"] = func(out["token"], -1)
    if isinstance(out.get("players"), list):
        out["players"] = [
            {**p, "token": func(p["token"], i)} if isinstance(p.get("token"), str) else p
            for i, p in enumerate(out["players"])
        ]
    hook = out.get("webhook")
    if isinstance(hook, dict) and isinstance(hook.get("token"), str):
        out["webhook"] = {**hook, "token": func(hook["token"], -2)}
    return out
