"""All Redis access of the service: :class:`GameStore` and :func:`connect`.

Nothing outside this package talks to Redis or sees a redis-py exception.
Documents and events are versioned JSON bytes serialized by the caller (never
pickle); see :mod:`service.store.game_store` for the layout.
"""

from service.redact import redact_url
from service.store import failures
from service.store.game_store import GameStore
from service.store.keys import key
from service.store.redis_client import connect
from service.store.script_args import StoredEvent
from service.store.shutdown import request_shutdown
from service.store.store_errors import (
    GameExists,
    GameNotFound,
    IdempotentReplay,
    NotDurable,
    StoreError,
    StoreMisconfigured,
    StoreUnavailable,
    TooManyStreams,
    VersionConflict,
)

__all__ = [
    "GameExists",
    "GameNotFound",
    "GameStore",
    "IdempotentReplay",
    "NotDurable",
    "StoreError",
    "StoreMisconfigured",
    "StoreUnavailable",
    "StoredEvent",
    "TooManyStreams",
    "VersionConflict",
    "connect",
    "failures",
    "key",
    "redact_url",
    "request_shutdown",
]
