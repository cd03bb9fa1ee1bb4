"""Secrets and ids of hosted games: bearer tokens (only their hashes are
stored) and game ids."""

from __future__ import annotations

import base64
import hashlib
import secrets

TOKEN_BYTES = 32

GAME_ID_PATTERN = r"[A-Za-z0-9_-]{1,64}"
"""What a game id looks like in a path (ours are 22 URL-safe characters; anything
else is answered 404 before reaching Redis)."""


def _urlsafe(nbytes: int) -> str:
    """``nbytes`` random bytes, URL-safe, never starting with ``-`` (which a
    command line would read as an option: ``--game -x...``)."""
    while True:
        text = secrets.token_urlsafe(nbytes)
        if not text.startswith("-"):
            return text


def new_token() -> str:
    """A bearer token: 256 random bits, URL-safe."""
    return _urlsafe(TOKEN_BYTES)


def hash_token(token: str) -> str:
    """Only this hash of a token is ever stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_game_id() -> str:
    """An unguessable game id (128 random bits)."""
    return _urlsafe(16)


def rematch_game_id(game_id: str) -> str:
    """The id of ``game_id``'s rematch: one id, whoever asks first and however many
    ask at once, so racing requests make one game.  As unguessable as ``game_id``
    (whose public view links the rematch anyway).

    >>> rematch_game_id("abc") == rematch_game_id("abc") != rematch_game_id("abd")
    True
    >>> len(rematch_game_id("abc"))
    22
    """
    return _derived_id(f"rematch\0{game_id}")


def keyed_game_id(key_hash: str) -> str:
    """The id of the game created by the request whose ``Idempotency-Key`` has the
    hash ``key_hash``: a retry of that request finds the game, and the answer saved
    with it, under the same id.  As unguessable as the key (which must be random).

    >>> keyed_game_id("ab") == keyed_game_id("ab") != rematch_game_id("ab")
    True
    """
    return _derived_id(f"created\0{key_hash}")


def _derived_id(text: str) -> str:
    digest = hashlib.sha256(text.encode()).digest()[:16]
    out = base64.urlsafe_b64encode(digest).decode().rstrip("=")
    return "_" + out[1:] if out.startswith("-") else out
