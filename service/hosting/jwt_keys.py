"""The public keys an app signs its players' JWTs with (apps mode): a key's ``kid``,
algorithm and PEM, checked before it is used: a key registered by the operator
(``three-thirteen-admin apps add-key``), or one of the app's JWKS
(:mod:`service.hosting.jwks`).  Each algorithm takes one kind of key only, so a
public key is never taken for an HMAC secret nor for another algorithm's key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key

ALGORITHMS = ("EdDSA", "ES256", "RS256")
"""The signing algorithms a key may be registered for."""


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
