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


PLAYER_HOLDER_PREFIX = "p:"
"""How the holder of a seat bound to a player begins (never a token's hash, which is
hex: :func:`service.hosting.players.player_holder`)."""


def hash_token(token: str) -> str:
    """Only this hash of a token is ever stored."""
    return hashlib.sha256(token.encode()).hexdigest()


APP_ID_LENGTH = 10
"""An app's id: this many lowercase letters and digits (:mod:`service.hosting.apps`)."""

APP_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def is_app_id(text: str) -> bool:
    """Whether ``text`` is shaped like an app's id.

    >>> is_app_id("a1b2c3d4e5"), is_app_id("A1b2c3d4e5"), is_app_id("a1b2")
    (True, False, False)
    """
    return len(text) == APP_ID_LENGTH and all(c in APP_ID_ALPHABET for c in text)


def new_game_id(app: str | None = None) -> str:
    """An unguessable game id (128 random bits); a game of ``app`` has its id
    first (:func:`app_of_game`)."""
    return in_app(app, _urlsafe(16))


def in_app(app: str | None, game_id: str) -> str:
    """``game_id`` as the id of a game of ``app`` (None: of no app).

    >>> in_app("a1b2c3d4e5", "x" * 22)[:11], in_app(None, "xyz")
    ('a1b2c3d4e5-', 'xyz')
    """
    return game_id if app is None else f"{app}-{game_id}"


def app_of_game(game_id: str) -> str | None:
    """The app whose game ``game_id`` is, None for a game of no app (made in open
    mode).  A game's app is part of its id, so that every request, the hottest
    too, knows it without reading the game: the ids the service makes are 22
    characters alone, or an app's id, ``-`` and 22 characters (33).

    >>> app_of_game(new_game_id("a1b2c3d4e5")), app_of_game(new_game_id())
    ('a1b2c3d4e5', None)
    """
    if len(game_id) != APP_ID_LENGTH + 23 or game_id[APP_ID_LENGTH] != "-":
        return None
    app = game_id[:APP_ID_LENGTH]
    return app if is_app_id(app) else None


def rematch_game_id(game_id: str) -> str:
    """The id of ``game_id``'s rematch: one id, whoever asks first and however many
    ask at once, so racing requests make one game.  As unguessable as ``game_id``
    (whose public view links the rematch anyway).

    >>> rematch_game_id("abc") == rematch_game_id("abc") != rematch_game_id("abd")
    True
    >>> len(rematch_game_id("abc"))
    22
    >>> app_of_game(rematch_game_id(new_game_id("a1b2c3d4e5")))
    'a1b2c3d4e5'
    """
    return in_app(app_of_game(game_id), _derived_id(f"rematch\0{game_id}"))


def keyed_game_id(key_hash: str, app: str | None = None) -> str:
    """The id of the game created by the request whose ``Idempotency-Key`` has the
    hash ``key_hash``: a retry of that request finds the game, and the answer saved
    with it, under the same id.  As unguessable as the key (which must be random).

    >>> keyed_game_id("ab") == keyed_game_id("ab") != rematch_game_id("ab")
    True
    """
    return in_app(app, _derived_id(f"created\0{key_hash}"))


def _derived_id(text: str) -> str:
    digest = hashlib.sha256(text.encode()).digest()[:16]
    out = base64.urlsafe_b64encode(digest).decode().rstrip("=")
    return "_" + out[1:] if out.startswith("-") else out
