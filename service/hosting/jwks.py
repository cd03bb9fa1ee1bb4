"""An app's JWKS URL (``three-thirteen-admin apps set-jwks``): the public keys the app
signs its players' JWTs with, fetched by each instance from the app's own URL, so
that the app rotates its keys by itself (publish the next key, sign with it, drop the
old one once its tokens expired).

Fetched with PyJWT's :class:`jwt.PyJWKClient` (its timeout), and kept per instance
(:class:`JwksCache`): the keys fetched serve for ``lifetime`` seconds, then the set is
fetched again on its next use; a JWT naming a ``kid`` the set does not have fetches
it again at once -- but each app's set is fetched at most once per ``refetch``
seconds, whatever the JWTs name, so tokens of made-up kids cannot make this instance
hammer the app's server.  When a fetch fails (timeout, an error, a document that is
no JWKS) the keys fetched before stay in use and the failure is logged.

A key of the set is used only with its ``kid`` and with the algorithm its key type
signs (:mod:`service.hosting.jwt_keys`): ``alg``, when the key names one, must be
that one; keys for encryption (``use: enc``) and keys of other kinds are skipped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import jwt
from cryptography.hazmat.primitives import serialization

from service.hosting.jwt_keys import JwtKey, JwtKeyError, check_key

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})

ALG_OF_KEY: dict[tuple[object, object], str] = {
    ("OKP", "Ed25519"): "EdDSA",
    ("EC", "P-256"): "ES256",
    ("RSA", None): "RS256",
}
"""The algorithm each kind of key (``kty``, ``crv``) signs with."""

Fetch = Callable[[str, float], Any]
"""Fetches a URL's JSON within a timeout (seconds)."""


class JwksUrlError(ValueError):
    """A JWKS URL refused for registration."""


def check_url(url: str) -> str:
    """A JWKS URL to register: ``https://``, or ``http://`` to a loopback address."""
    parts = urlsplit(url)
    secure = parts.scheme == "https" or (
        parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS
    )
    if len(url) > 2048 or not parts.hostname or not secure:
        raise JwksUrlError(
            "a JWKS URL is https://... (http:// only to 127.0.0.1 or localhost), "
            "at most 2048 characters"
        )
    return url


def keys_of(document: Any) -> dict[str, JwtKey]:
    """The usable keys of a JWKS document, by ``kid`` (:class:`JwtKeyError` when
    it is no JWKS)."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise JwtKeyError('a JWKS is a JSON object with a list of "keys"')
    found: dict[str, JwtKey] = {}
    for jwk in document["keys"]:
        key = _key_of(jwk)
        if key is not None:
            found[key.kid] = key
    return found


def _key_of(jwk: Any) -> JwtKey | None:
    if not isinstance(jwk, dict) or jwk.get("use", "sig") != "sig":
        return None
    kty, curve, kid = jwk.get("kty"), jwk.get("crv"), jwk.get("kid")
    alg = ALG_OF_KEY.get((kty, curve if kty != "RSA" else None))
    if alg is None or not isinstance(kid, str) or jwk.get("alg", alg) != alg:
        return None
    try:
        public = jwt.PyJWK(jwk, algorithm=alg).key
        pem = public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode()
        return check_key(kid, alg, pem)
    except (jwt.PyJWTError, JwtKeyError, AttributeError, ValueError, TypeError):
        return None  # a private key, a short RSA key, a malformed one: not used


def fetch_json(url: str, timeout: float) -> Any:
    """The JSON at ``url``, fetched by PyJWT's JWKS client within ``timeout``."""
    return jwt.PyJWKClient(url, cache_keys=False, cache_jwk_set=False, timeout=timeout).fetch_data()


@dataclass
class _Fetched:
    url: str
    keys: dict[str, JwtKey] = field(default_factory=dict)
    fetched: float | None = None
    """When the keys were fetched (monotonic; None: never)."""
    tried: float | None = None
    """When the URL was last fetched, or tried (monotonic)."""
    lock: threading.Lock = field(default_factory=threading.Lock)


class JwksCache:
    """The JWKS of each app, as this instance fetched them (see the module)."""

    def __init__(
        self,
        lifetime: float = 300,
        refetch: float = 30,
        timeout: float = 3,
        fetch: Fetch = fetch_json,
    ) -> None:
        self.lifetime, self.refetch, self.timeout, self.fetch = lifetime, refetch, timeout, fetch
        self._lock = threading.Lock()
        self._apps: dict[str, _Fetched] = {}

    def key(self, app_id: str, url: str, kid: str) -> JwtKey | None:
        """The key ``kid`` of the JWKS at ``url`` (app ``app_id``'s), fetched when
        the keys are older than ``lifetime`` or do not have ``kid``, unless the URL
        was fetched less than ``refetch`` seconds ago; None: no such key."""
        with self._lock:
            entry = self._apps.get(app_id)
            if entry is None or entry.url != url:
                if len(self._apps) > 10_000:  # bounded: one per app using a JWKS
                    self._apps.clear()
                entry = self._apps[app_id] = _Fetched(url)
        with entry.lock:  # one fetch of an app's set at a time; the others wait for it
            if self._due(entry, kid, time.monotonic()):
                self._fetch(app_id, entry)
            return entry.keys.get(kid)

    def _due(self, entry: _Fetched, kid: str, now: float) -> bool:
        if entry.tried is not None and now - entry.tried < self.refetch:
            return False
        stale = entry.fetched is None or now - entry.fetched >= self.lifetime
        return stale or kid not in entry.keys

    def _fetch(self, app_id: str, entry: _Fetched) -> None:
        entry.tried = time.monotonic()
        try:
            keys = keys_of(self.fetch(entry.url, self.timeout))
        except (jwt.PyJWTError, JwtKeyError, OSError, ValueError) as exc:
            log.warning("app %s: JWKS not fetched from %s: %s", app_id, entry.url, exc)
            return
        entry.keys, entry.fetched = keys, time.monotonic()
