"""Players identified by JSON Web Tokens their app signs (apps mode), verified with
PyJWT against the public keys the operator registered for the app
(``three-thirteen-admin apps add-key``).

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
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from service.hosting.apps import App, AppDirectory
from service.hosting.players import PLAYER_ID_PATTERN, Player, TokenExpired, player_tag

ALGORITHMS = ("EdDSA", "ES256", "RS256")
"""The signing algorithms a key may be registered for."""

MAX_JWT_LIFETIME_SECONDS = 86400
"""The most a player JWT may live (``exp - iat``)."""

LEEWAY_SECONDS = 10
"""Clock skew allowed between the app's clock and ours, for ``iat`` and ``exp``."""

AUDIENCE_PREFIX = "t13:"


class JwtKeyError(ValueError):
    """A public key refused for registration."""


@dataclass(frozen=True, slots=True)
class JwtKey:
    """A public key an app signs player JWTs with: its ``kid``, algorithm and PEM."""

    kid: str
    alg: str
    pem: str

    def to_dict(self) -> dict[str, Any]:
        return {"kid": self.kid, "alg": self.alg, "pem": self.pem}


def check_key(kid: str, alg: str, pem: str) -> JwtKey:
    """A key to register, checked: a PEM public key of the kind ``alg`` signs with."""
    if not 1 <= len(kid) <= 64 or not kid.isprintable():
        raise JwtKeyError("a kid is 1 to 64 printable characters")
    if alg not in ALGORITHMS:
        raise JwtKeyError(f"alg is one of {', '.join(ALGORITHMS)}")
    try:
        key = load_pem_public_key(pem.encode())
    except ValueError as exc:
        raise JwtKeyError(f"not a PEM public key: {exc}") from None
    fits = {
        "EdDSA": isinstance(key, ed25519.Ed25519PublicKey),
        "ES256": isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1),
        "RS256": isinstance(key, rsa.RSAPublicKey) and key.key_size >= 2048,
    }[alg]
    if not fits:
        raise JwtKeyError(
            f"this key does not sign {alg} (EdDSA: Ed25519; ES256: P-256; "
            "RS256: RSA of 2048 bits or more)"
        )
    return JwtKey(kid, alg, pem)


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
    key = _key(app, header)
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


def _key(app: App, header: dict[str, Any]) -> JwtKey:
    kid, alg = header.get("kid"), header.get("alg")
    for stored in app.jwt_keys:
        if stored.get("kid") == kid:
            if alg != stored.get("alg"):
                raise JwtRefused("alg")
            return JwtKey(stored["kid"], stored["alg"], stored["pem"])
    raise JwtRefused("kid")


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
