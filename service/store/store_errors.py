"""Exceptions raised by the store; no redis-py exception ever leaves the package."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every store error."""


class StoreUnavailable(StoreError):
    """Redis cannot be reached or cannot serve the request now (map to 503 + Retry-After)."""


class NotDurable(StoreUnavailable):
    """The change was made on the Redis primary, but not confirmed to last as
    ``REDIS_WAIT_REPLICAS`` / ``REDIS_WAIT_AOF`` ask (see
    :mod:`service.store.durability`): it may or may not survive a failover or a
    crash.  Its idempotency record was saved with it, so a retry with the same
    key either replays it (once confirmed) or, if it was lost, makes it anew."""


class StoreMisconfigured(StoreError):
    """The settings ask for what this Redis cannot do (e.g. ``WAITAOF`` before 7.2)."""


class GameNotFound(StoreError):
    """No game with this id (never created, or expired)."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id!r} not found")
        self.game_id = game_id


class GameExists(StoreError):
    """:meth:`GameStore.create` found a game with this id already."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id!r} already exists")
        self.game_id = game_id


class VersionConflict(StoreError):
    """The game changed since it was loaded; nothing was written."""

    def __init__(self, current_version: int) -> None:
        super().__init__(f"version conflict: the game is at version {current_version}")
        self.current_version = current_version


class IdempotentReplay(StoreError):
    """The idempotency key was already used; nothing was written.

    ``fingerprint`` and ``response`` are what the first request stored: replay
    ``response`` if the fingerprint matches, else answer 422.  ``last`` is the id
    of that request's write's last event (``<seq>.<tag>``), for its ETag.
    """

    def __init__(self, fingerprint: bytes, response: bytes, last: bytes) -> None:
        super().__init__("idempotency key already used")
        self.fingerprint = fingerprint
        self.response = response
        self.last = last


class TooManyStreams(StoreError):
    """A stream's lease refused: its ``holder`` (``"address"`` or ``"seat"``) has
    ``cap`` live leases already, the first of which lapses in ``retry_after``
    seconds (unless its stream renews it)."""

    def __init__(self, holder: str, cap: int, retry_after: float) -> None:
        super().__init__(f"this {holder} has {cap} open streams already")
        self.holder = holder
        self.cap = cap
        self.retry_after = retry_after
