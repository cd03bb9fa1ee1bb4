"""The delivery log of an app's webhook (:mod:`service.hosting.app_webhooks`).

``t13:app:{<app id>}:hooks-log`` list (:func:`~service.store.keys.app_hook_log_key`):
each attempt of a delivery to the app's webhook, JSON, the last :data:`LOG_ENTRIES`,
with the delivery's game and body (a delivery is sent again from it).  It is in the
app's slot, not in the game's where the attempt is settled
(:meth:`~service.store.outbox.Outbox.settle`), so the worker appends the line just
after settling: a worker that dies between the two leaves an attempt unlogged (the
delivery itself is settled all the same).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from service.store import keys
from service.store.failures import translate_errors
from service.store.outbox import LOG_ENTRIES, queue
from service.store.redis_client import RedisClient


class AppHookLog:
    """Apps' delivery logs; ``client`` gives the (lazily connected) client."""

    def __init__(self, client: Callable[[], RedisClient], ttl_seconds: int) -> None:
        self._client = client
        self._ttl = ttl_seconds

    def append(self, app_id: str, line: dict[str, Any]) -> None:
        """Log one attempt (kept :data:`LOG_ENTRIES` at most, for the TTL after the last)."""
        key = keys.app_hook_log_key(app_id)
        with translate_errors():
            pipe = self._client().pipeline(transaction=True)
            pipe.rpush(key, orjson.dumps(line))
            pipe.ltrim(key, -LOG_ENTRIES, -1)
            pipe.expire(key, self._ttl)
            pipe.execute()

    def read(self, app_id: str) -> list[dict[str, Any]]:
        """The app's logged attempts, oldest first."""
        with translate_errors():
            lines = self._client().lrange(keys.app_hook_log_key(app_id), 0, -1)
        return [orjson.loads(line) for line in lines]

    def requeue(self, game_id: str, header: bytes, body: bytes) -> None:
        """Queue a delivery of ``game_id`` again (see :func:`~service.store.outbox.queue`)."""
        queue(self._client(), game_id, header, body)
