"""Players: an app's users, as the service knows them in ``AUTH_MODE=apps``.

An app's backend mints a token for one of its users (``player_id``, the app's own
id for them) with its secret key: ``t13_pt_<tag>_<43 characters>`` (256 random bits),
shown once.  ``<tag>`` is a hash of the app's and the player's ids: it names the
player's Redis hash (:mod:`service.store.app_registry`), where only the token's
SHA-256 is kept, with its expiry, the player's name and ids.  Checking a token is
one read of that hash, on every request (no cache): a token revoked, or a player
barred, is refused by every instance from the next request on.  A request that
reads its game first sends that read in the same round trip
(:func:`verify_reading`): a player's credential then costs no round trip of its own.

A seat a player takes holds the player's *holder* (:func:`player_holder`) where a
seat token's seat holds the token's hash: every credential of the player, on any
device, acts for that seat; a seat token is never issued for it.  A holder starts
with ``p:``, which no SHA-256 in hex does, so no bearer token can stand for one.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from service.hosting.tokens import PLAYER_HOLDER_PREFIX, hash_token, new_token
from service.store import GameStore
from service.store.app_registry import AppRegistry, PlayerToken, player_token_read
from service.store.game_reads import Read

TOKEN_PREFIX = "t13_pt_"
"""How a player token begins."""

TAG_CHARS = 32
"""Hex characters of a player's tag (128 bits)."""

PLAYER_ID_PATTERN = r"[A-Za-z0-9_.@-]{1,128}"
"""What an app's id for a user may look like (in a path)."""

MAX_LIFETIME_SECONDS = 30 * 86400
"""The longest a player token may live."""

TOKEN_PATTERN = re.compile(rf"{TOKEN_PREFIX}([0-9a-f]{{{TAG_CHARS}}})_[A-Za-z0-9_-]{{40,}}")


def player_tag(app_id: str, player_id: str) -> str:
    """The tag of one player of one app (its keys', and its tokens').

    >>> len(player_tag("a1b2c3d4e5", "u1")), player_tag("a", "u1") != player_tag("b", "u1")
    (32, True)
    """
    text = f"{app_id}\0{player_id}".encode()
    return hashlib.sha256(text).hexdigest()[:TAG_CHARS]


def player_holder(app_id: str, player_id: str) -> str:
    """What a seat the player holds keeps in place of a token's hash.

    >>> player_holder("a1b2c3d4e5", "u1")[:2]
    'p:'
    """
    digest = hashlib.sha256(f"player\0{app_id}\0{player_id}".encode()).hexdigest()
    return PLAYER_HOLDER_PREFIX + digest


@dataclass(frozen=True, slots=True)
class Player:
    """Who a valid player token stands for."""

    app: str
    id: str
    name: str
    expires: float

    @property
    def holder(self) -> str:
        return player_holder(self.app, self.id)

    @property
    def tag(self) -> str:
        return player_tag(self.app, self.id)


class PlayerError(ValueError):
    """A player operation refused (a barred player, a bad lifetime)."""


def mint(
    registry: AppRegistry, app_id: str, player_id: str, name: str, lifetime: int
) -> tuple[str, float]:
    """A new token for ``player_id`` of ``app_id`` (shown once), and when it expires.
    :class:`PlayerError` for a barred player."""
    if not 1 <= lifetime <= MAX_LIFETIME_SECONDS:
        raise PlayerError(f"a token's lifetime is 1 to {MAX_LIFETIME_SECONDS} seconds")
    tag = player_tag(app_id, player_id)
    token = f"{TOKEN_PREFIX}{tag}_{new_token()}"
    now = time.time()
    expires = now + lifetime
    entry = orjson.dumps({"v": 1, "app": app_id, "player": player_id, "name": name, "iat": now})
    if not registry.add_player_token(tag, hash_token(token), entry, expires):
        raise PlayerError("this player is barred by the app")
    return token, expires


class TokenExpired(Exception):
    """A player token past its expiry."""


T = TypeVar("T")


def verify(registry: AppRegistry, token: str) -> Player | None:
    """The player ``token`` stands for: None when it is not one of ours, unknown,
    revoked or the player barred; :class:`TokenExpired` past its expiry."""
    shaped = TOKEN_PATTERN.fullmatch(token)
    if shaped is None:
        return None
    return _player(shaped[1], registry.player_token(shaped[1], hash_token(token)))


def verify_reading(store: GameStore, token: str, read: Read[T]) -> tuple[Player, T] | None:
    """:func:`verify` with ``read`` (the game's read its request makes first) in the
    same round trip: the player and what ``read`` found, or None where
    :func:`verify` gives None."""
    shaped = TOKEN_PATTERN.fullmatch(token)
    if shaped is None:
        return None
    found, result = store.read_both(player_token_read(shaped[1], hash_token(token)), read)
    player = _player(shaped[1], found)
    return None if player is None else (player, result)


def _player(tag: str, found: PlayerToken | None) -> Player | None:
    """The player of a token of ``tag`` as its player's hash holds it (``found``)."""
    if found is None:
        return None
    expires, entry = found
    if time.time() >= expires:
        raise TokenExpired()
    data: dict[str, Any] = orjson.loads(entry)
    if data.get("v") != 1:
        return None
    player = Player(data["app"], data["player"], data["name"], expires)
    return player if player.tag == tag else None


def is_player_token(token: str) -> bool:
    return token.startswith(TOKEN_PREFIX)


def revoke_all(registry: AppRegistry, app_id: str, player_id: str) -> int:
    """Revoke every token of the player (how many there were)."""
    return registry.revoke_player(player_tag(app_id, player_id))


def set_barred(registry: AppRegistry, app_id: str, player_id: str, barred: bool) -> int:
    """Bar the player (its tokens revoked, none minted, no seat taken) or lift its bar."""
    return registry.revoke_player(player_tag(app_id, player_id), bar=barred)


def is_barred(registry: AppRegistry, app_id: str, player_id: str) -> bool:
    return registry.is_barred(player_tag(app_id, player_id))
