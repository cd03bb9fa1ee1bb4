"""Players identified by JSON Web Tokens their app signs (apps mode), verified with
PyJWT against the public keys the operator registered for the app
(``three-thirteen-admin apps add-key``), or those of the JWKS the app publishes at
the URL registered for it (``apps set-jwks``; :mod:`service.hosting.jwks`): a kid
registered one by one is looked for first.

A player JWT is signed with EdDSA (Ed25519), ES256 (P-256) or RS256 (RSA, 2048 bits
or more) by the app's backend and names in its header the ``kid`` of a key
registered for the app with that very algorithm.  Its claims: ``aud`` is
``t13:<app id>`` (which app, and so which keys), ``sub`` the app's id for the player,
``iat`` when it was signed (not in the future), ``exp`` when it expires (at most
:data:`MAX_JWT_LIFETIME_SECONDS` after ``iat``); ``name`` optionally the player's
display name.  Refused: ``alg: none`` and any algorithm but the key's own (no
confusion of a public key with an HMAC secret), an unknown ``kid``, another ``aud``,
a future ``iat``, a passed ``exp``, a bad signature.

A JWT is not stored.  Revocation is the player's: every request also reads the
player's hash (one read, as for minted tokens), and a JWT issued before the player's
tokens were last revoked, or of a barred player, is refused.
"""

from __future__ import annotations

import re
import time
from typing import Any

import jwt

from service.hosting.apps import App, AppDirectory
from service.hosting.jwt_keys import JwtKey
from service.hosting.players import PLAYER_ID_PATTERN, Player, TokenExpired, player_tag

MAX_JWT_LIFETIME_SECONDS = 86400
"""The most a player JWT may live (``exp - iat``)."""

LEEWAY_SECONDS = 10
"""Clock skew allowed between the app's clock and ours, for ``iat`` and ``exp``."""

AUDIENCE_PREFIX = "t13:"


def looks_like_jwt(token: str) -> bool:
    """Whether ``token`` is shaped like a JWT (three dot-separated parts; our keys and
    tokens have no dot)."""
    return token.count(".") == 2 and token.startswith("eyJ")


class JwtRefused(Exception):
    """A player JWT refused (the reason is for logs' eyes: never the token)."""


def verify(directory: AppDirectory, token: str) -> Player:
    """The player a JWT stands for; :class:`JwtRefused` or :class:`TokenExpired`."""
    try:
        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        raise JwtRefused("malformed") from None
    audience = claims.get("aud")
    if not isinstance(audience, str) or not audience.startswith(AUDIENCE_PREFIX):
        raise JwtRefused("aud")
    app = directory.live(audience[len(AUDIENCE_PREFIX) :])
    if app is None:
        raise JwtRefused("app")
    key = _key(directory, app, header)
    try:
        verified = jwt.decode(
            token,
            key.pem,
            algorithms=[key.alg],
            audience=audience,
            leeway=LEEWAY_SECONDS,
            options={"require": ["exp", "iat", "sub", "aud"]},
        )
    except jwt.ExpiredSignatureError:
        raise TokenExpired() from None
    except jwt.PyJWTError as exc:
        raise JwtRefused(type(exc).__name__) from None
    return _player(directory, app, verified)


def _key(directory: AppDirectory, app: App, header: dict[str, Any]) -> JwtKey:
    """The key ``header`` names: one registered for the app, else one of its JWKS."""
    kid, alg = header.get("kid"), header.get("alg")
    if not isinstance(kid, str):
        raise JwtRefused("kid")
    found = next((JwtKey(**k) for k in app.jwt_keys if k.get("kid") == kid), None)
    if found is None and app.jwks_url is not None:
        found = directory.jwks.key(app.id, app.jwks_url, kid)
    if found is None:
        raise JwtRefused("kid")
    if alg != found.alg:
        raise JwtRefused("alg")
    return found


def _player(directory: AppDirectory, app: App, claims: dict[str, Any]) -> Player:
    subject, issued, expires = claims["sub"], claims["iat"], claims["exp"]
    if not isinstance(subject, str) or re.fullmatch(PLAYER_ID_PATTERN, subject) is None:
        raise JwtRefused("sub")
    if not isinstance(issued, int | float) or not isinstance(expires, int | float):
        raise JwtRefused("times")
    if issued > time.time() + LEEWAY_SECONDS:
        raise JwtRefused("iat")
    if expires - issued > MAX_JWT_LIFETIME_SECONDS:
        raise JwtRefused("lifetime")
    state = directory.registry.player_state(player_tag(app.id, subject))
    if state.barred or (state.revoked is not None and issued <= state.revoked):
        raise JwtRefused("revoked")
    name = claims.get("name")
    return Player(app.id, subject, name if isinstance(name, str) else subject, float(expires))
