"""Apps: the software an operator lets use the service in ``AUTH_MODE=apps``.

Each app has an id (10 lowercase letters and digits; part of its games' ids:
:func:`~service.hosting.tokens.app_of_game`), a name and secret keys for its backend,
``t13_sk_<app id>_<43 characters>`` (256 random bits), each shown once, when made.
Only a key's SHA-256 is stored: a key has 256 bits of entropy, so its hash cannot be
reversed nor searched (a slow password hash guards guessable secrets, and would
cost every request its time); the app's id in the key finds its record in one read.
A key is compared with each stored hash in constant time (:func:`hmac.compare_digest`).

Rotating gives a new key and keeps the old ones valid for an overlap window (they
expire then); revoking an app refuses all its keys, its players' tokens and its
games' requests but their seat tokens'.  Records are read through :class:`AppDirectory`,
which keeps each for at most a second, so a change is seen by every instance
within a second.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from service.config import Config
from service.hosting.jwks import JwksCache
from service.hosting.tokens import APP_ID_ALPHABET, APP_ID_LENGTH, is_app_id, new_token
from service.store.app_registry import AppRegistry

APP_FORMAT = 1
"""The format number of a stored app record; another is refused when read."""

KEY_PREFIX = "t13_sk_"
"""How an app's secret key begins (``t13_sk_<app id>_<secret>``)."""

SHOWN_PREFIX = 16
"""Characters of a key shown in listings and logs (``t13_sk_<app id>``: no secret)."""

CACHE_SECONDS = 0.5
"""How long an instance keeps an app's record before reading it again."""


LIMITS = (
    "creates_per_minute",
    "concurrent_games",
    "moves_per_minute",
    "listings_per_minute",
    "player_moves_per_minute",
)
"""The limits an operator sets per app (``three-thirteen-admin apps limits``), each
defaulting to the configuration's ``APP_<NAME>``: games created a minute, games not
ended at once, moves a minute, lobby listings a minute (the app's backend and its
players together), and moves a minute of each of its players."""


MATCHMAKING = ("skill_base", "skill_widen_per_second", "skill_max", "bot_fill_seconds")
"""The quick-join skill window (and when bots fill a table) an operator sets per app
(``three-thirteen-admin apps matchmaking``), each defaulting to the configuration's
``QUICKJOIN_<NAME>`` (:class:`service.hosting.skill_window.SkillWindow`)."""

MATCHMAKING_MOST = 1e6
"""The largest value of a matchmaking setting."""


class AppError(ValueError):
    """An app operation refused (no such app, a bad name...)."""


@dataclass(slots=True)
class AppKey:
    """One secret key of an app: its SHA-256, when it was made, and when it stops
    being valid (None: until rotated or revoked)."""

    hash: str
    created: float
    expires: float | None = None

    def valid_at(self, now: float) -> bool:
        return self.expires is None or now < self.expires

    def to_dict(self) -> dict[str, Any]:
        return {"hash": self.hash, "created": self.created, "expires": self.expires}


@dataclass(slots=True)
class App:
    """An app's record."""

    id: str
    name: str
    created: float
    keys: list[AppKey] = field(default_factory=list)
    revoked: float | None = None
    jwt_keys: list[dict[str, str]] = field(default_factory=list)
    """The public keys its backend signs player JWTs with: ``{kid, alg, pem}``
    (:mod:`service.hosting.player_jwts`)."""
    limits: dict[str, int] = field(default_factory=dict)
    """The limits the operator set for it (:data:`LIMITS` -> the most, 0: none); one
    not set is the configuration's (:meth:`limit`)."""
    jwks_url: str | None = None
    """Where its backend publishes its JWKS, the other keys of its JWTs
    (:mod:`service.hosting.jwks`)."""
    webhook: dict[str, Any] | None = None
    """Where its games' lifecycle is told: ``{url, events, secret, turn_only_offline}``
    (:mod:`service.hosting.app_webhooks`; None: nowhere)."""
    matchmaking: dict[str, float] = field(default_factory=dict)
    """The quick-join skill window the operator set for it (:data:`MATCHMAKING` ->
    its value); one not set is the configuration's."""

    def to_bytes(self) -> bytes:
        return orjson.dumps(
            {
                "f": APP_FORMAT,
                "id": self.id,
                "name": self.name,
                "created": self.created,
                "revoked": self.revoked,
                "keys": [k.to_dict() for k in self.keys],
                "jwt_keys": self.jwt_keys,
                "limits": self.limits,
                "jwks_url": self.jwks_url,
                "webhook": self.webhook,
                "matchmaking": self.matchmaking,
            }
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> App:
        doc = orjson.loads(data)
        if doc.get("f") != APP_FORMAT:
            raise ValueError(f"app record of format {doc.get('f')!r}, expected {APP_FORMAT}")
        return cls(
            doc["id"],
            doc["name"],
            doc["created"],
            [AppKey(k["hash"], k["created"], k["expires"]) for k in doc["keys"]],
            doc["revoked"],
            doc.get("jwt_keys", []),
            doc.get("limits", {}),
            doc.get("jwks_url"),
            doc.get("webhook"),
            doc.get("matchmaking", {}),
        )

    def accepts(self, key: str, now: float) -> bool:
        """Whether ``key`` is one of this app's valid keys (every stored hash is
        compared, in constant time)."""
        if self.revoked is not None:
            return False
        digest = hash_key(key)
        found = False
        for stored in self.keys:
            if hmac.compare_digest(stored.hash, digest) and stored.valid_at(now):
                found = True
        return found

    def summary(self, now: float) -> dict[str, Any]:
        """What ``apps list`` shows: no hash, no key."""
        return {
            "id": self.id,
            "name": self.name,
            "created": self.created,
            "revoked": self.revoked,
            "keys": [
                {"created": k.created, "expires": k.expires} for k in self.keys if k.valid_at(now)
            ],
            "jwt_keys": [{"kid": k["kid"], "alg": k["alg"]} for k in self.jwt_keys],
            "limits": {name: self.limits.get(name) for name in LIMITS},
            "matchmaking": {name: self.matchmaking.get(name) for name in MATCHMAKING},
            "jwks_url": self.jwks_url,
            "webhook": None
            if self.webhook is None
            else {k: v for k, v in self.webhook.items() if k != "secret"},
        }

    def limit(self, name: str, config: Config) -> int:
        """The most the app may do of limit ``name`` (one of :data:`LIMITS`; 0: no
        limit): the operator's for the app, else the configuration's
        (``APP_<NAME>``).

        >>> app = App("a1b2c3d4e5", "cards", 0.0, limits={"moves_per_minute": 50})
        >>> app.limit("moves_per_minute", Config()), app.limit("creates_per_minute", Config())
        (50, 600)
        """
        found = self.limits.get(name)
        return int(getattr(config, f"app_{name}")) if found is None else found


def hash_key(key: str) -> str:
    """The stored form of a secret key (see the module's docstring)."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_key(app_id: str) -> str:
    """A new secret key of app ``app_id``."""
    return f"{KEY_PREFIX}{app_id}_{new_token()}"


def app_of_key(key: str) -> str | None:
    """The app id a secret key names (None: not shaped like one).

    >>> app_of_key("t13_sk_a1b2c3d4e5_" + "x" * 43), app_of_key("t13_sk_nope")
    ('a1b2c3d4e5', None)
    """
    if not key.startswith(KEY_PREFIX):
        return None
    rest = key[len(KEY_PREFIX) :]
    app_id, sep, secret = rest.partition("_")
    if not sep or not is_app_id(app_id) or len(secret) < 40:
        return None
    return app_id


def _new_app_id() -> str:
    return "".join(secrets.choice(APP_ID_ALPHABET) for _ in range(APP_ID_LENGTH))


def create_app_record(registry: AppRegistry, name: str) -> tuple[App, str]:
    """A new app named ``name`` and its first secret key (shown once)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise AppError("an app's name is 1 to 100 characters")
    while True:
        app = App(_new_app_id(), name, time.time())
        key = new_key(app.id)
        app.keys.append(AppKey(hash_key(key), app.created))
        if registry.save_app(app.id, app.to_bytes(), new=True):
            return app, key


def load(registry: AppRegistry, app_id: str) -> App:
    """The app ``app_id``; :class:`AppError` if there is none."""
    found = registry.load_app(app_id) if is_app_id(app_id) else None
    if found is None:
        raise AppError(f"no app {app_id!r}")
    return App.from_bytes(found)


def rotate(registry: AppRegistry, app_id: str, overlap_seconds: float) -> tuple[App, str]:
    """A new secret key for ``app_id`` (shown once); its current keys stay valid
    ``overlap_seconds`` more (0: refused at once), then expire."""
    if overlap_seconds < 0:
        raise AppError("the overlap is 0 seconds or more")
    app = load(registry, app_id)
    if app.revoked is not None:
        raise AppError(f"app {app_id} is revoked")
    now = time.time()
    cutoff = now + overlap_seconds
    kept = []
    for old in app.keys:
        if old.valid_at(now):
            old.expires = cutoff if old.expires is None else min(old.expires, cutoff)
            kept.append(old)
    key = new_key(app.id)
    app.keys = [*kept, AppKey(hash_key(key), now)]
    registry.save_app(app.id, app.to_bytes())
    return app, key


def revoke(registry: AppRegistry, app_id: str) -> App:
    """Revoke ``app_id``: its keys, its players' tokens and its games refused from now."""
    app = load(registry, app_id)
    if app.revoked is None:
        app.revoked = time.time()
    registry.save_app(app.id, app.to_bytes())
    return app


def set_jwt_key(registry: AppRegistry, app_id: str, kid: str, key: dict[str, str] | None) -> App:
    """Register ``key`` (``{kid, alg, pem}``, checked by the caller) as the app's JWT
    key ``kid``, replacing one of that kid; None removes the kid's key."""
    app = load(registry, app_id)
    kept = [k for k in app.jwt_keys if k["kid"] != kid]
    if key is None and len(kept) == len(app.jwt_keys):
        raise AppError(f"app {app_id} has no key {kid!r}")
    app.jwt_keys = kept if key is None else [*kept, key]
    registry.save_app(app.id, app.to_bytes())
    return app


def set_limits(registry: AppRegistry, app_id: str, changes: dict[str, int | None]) -> App:
    """Set the app's limits named in ``changes`` (of :data:`LIMITS`) to the most
    given (0: no limit; None: the configuration's again)."""
    app = load(registry, app_id)
    for name, most in changes.items():
        if name not in LIMITS:
            raise AppError(f"no limit {name!r}; the limits are {', '.join(LIMITS)}")
        if most is None:
            app.limits.pop(name, None)
        elif most < 0:
            raise AppError(f"{name}: 0 (no limit) or more")
        else:
            app.limits[name] = most
    registry.save_app(app.id, app.to_bytes())
    return app


def set_matchmaking(registry: AppRegistry, app_id: str, changes: dict[str, float | None]) -> App:
    """Set the app's quick-join skill window settings named in ``changes`` (of
    :data:`MATCHMAKING`) to the value given (0 up to :data:`MATCHMAKING_MOST`;
    None: the configuration's again).

    >>> from service.store.app_registry import AppRegistry
    >>> set_matchmaking(AppRegistry(lambda: None), "a1b2c3d4e5", {"skill_max": -1.0})
    Traceback (most recent call last):
    ...
    service.hosting.apps.AppError: skill_max: a number from 0 to 1000000
    """
    for name, value in changes.items():
        if name not in MATCHMAKING:
            raise AppError(f"no setting {name!r}; the settings are {', '.join(MATCHMAKING)}")
        if value is not None and not 0 <= value <= MATCHMAKING_MOST:  # NaN too
            raise AppError(f"{name}: a number from 0 to {MATCHMAKING_MOST:.0f}")
    app = load(registry, app_id)
    for name, value in changes.items():
        if value is None:
            app.matchmaking.pop(name, None)
        else:
            app.matchmaking[name] = float(value)
    registry.save_app(app.id, app.to_bytes())
    return app


def set_jwks_url(registry: AppRegistry, app_id: str, url: str | None) -> App:
    """Make ``url`` (checked by the caller) the app's JWKS URL; None: no JWKS."""
    app = load(registry, app_id)
    if url is None and app.jwks_url is None:
        raise AppError(f"app {app_id} has no JWKS URL")
    app.jwks_url = url
    registry.save_app(app.id, app.to_bytes())
    return app


def list_apps(registry: AppRegistry) -> list[App]:
    """Every app, by id."""
    out = []
    for app_id in registry.app_ids():
        found = registry.load_app(app_id)
        if found is not None:
            out.append(App.from_bytes(found))
    return out


class AppDirectory:
    """The apps' records as one instance reads them: each kept at most
    :data:`CACHE_SECONDS`, so a rotation or revocation is seen everywhere within a
    second while a busy app costs one read a half-second."""

    def __init__(
        self,
        registry: AppRegistry,
        cache_seconds: float = CACHE_SECONDS,
        jwks: JwksCache | None = None,
    ) -> None:
        self.registry = registry
        self.cache_seconds = cache_seconds
        self.jwks = jwks or JwksCache()
        """The apps' JWKS as this instance fetched them."""
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, App | None]] = {}

    def get(self, app_id: str) -> App | None:
        """The app ``app_id`` (None: no such app)."""
        now = time.monotonic()
        with self._lock:
            found = self._cache.get(app_id)
        if found is not None and now - found[0] < self.cache_seconds:
            return found[1]
        data = self.registry.load_app(app_id)
        app = None if data is None else App.from_bytes(data)
        with self._lock:
            if len(self._cache) > 10_000:  # bounded: ids come from requests
                self._cache.clear()
            self._cache[app_id] = (now, app)
        return app

    def live(self, app_id: str) -> App | None:
        """The app ``app_id`` if it exists and is not revoked."""
        app = self.get(app_id)
        return app if app is not None and app.revoked is None else None

    def by_key(self, key: str) -> App | None:
        """The live app whose valid secret key ``key`` is, else None."""
        app_id = app_of_key(key)
        app = None if app_id is None else self.get(app_id)
        return app if app is not None and app.accepts(key, time.time()) else None
