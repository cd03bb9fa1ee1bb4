"""The live games of each app, in Redis, for its concurrent-games limit (the rules
are :mod:`service.hosting.app_games`'s; here only the calls).

``t13:app:{<app id>}:live`` sorted set (the app record's hash tag, so one app's
set is one key of one slot, on a Redis Cluster too): member a game's id, score
when it was added or last found live (ms).  A game is added, against the app's
limit, atomically (:data:`TAKE_SCRIPT`) before its first write, and removed
after the write that ends it; a member is never dropped for its age alone, only
once its game is read and found ended or gone (:meth:`AppLiveGames.drop`).
``t13:app:{<app id>}:live:healed`` string, kept a few seconds: the app's games were
all read then (:meth:`AppLiveGames.may_heal`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from service.store import keys
from service.store.failures import translate_errors
from service.store.redis_client import RedisClient

TAKE_SCRIPT = """
-- Add a game to an app's live games unless the app has its limit of them.
-- KEYS[1] the app's live games (sorted set, score: ms when added or last found live)
-- ARGV[1] the game's id, ARGV[2] now (ms), ARGV[3] the most live games (0: no limit)
-- Returns {0, n} when the game is counted (added, or there already), n the live games
-- with it; {1, n} at the limit, nothing changed.
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return {0, redis.call('ZCARD', KEYS[1])}
end
local held = redis.call('ZCARD', KEYS[1])
local most = tonumber(ARGV[3])
if most > 0 and held >= most then return {1, held} end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return {0, held + 1}
"""


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class AppLiveGames:
    """The Redis calls of the apps' concurrent-games limits (thread-safe)."""

    def __init__(self, client: Callable[[], RedisClient]) -> None:
        self._client = client
        self._script: Any = None

    def take(self, app_id: str, game_id: str, most: int) -> int | None:
        """Count ``game_id`` among ``app_id``'s live games unless the app has ``most``
        of them already (0: no limit): how many it has with it, or None (refused,
        nothing changed).  A game counted already is not counted twice.  Atomic."""
        client = self._client()
        if self._script is None:
            self._script = client.register_script(TAKE_SCRIPT)
        now = int(time.time() * 1000)
        with translate_errors():
            refused, held = self._script(
                keys=[keys.app_live_games_key(app_id)], args=[game_id, now, most]
            )
        return None if int(refused) else int(held)

    def games(self, app_id: str) -> list[tuple[str, float]]:
        """Every game counted live for ``app_id``: ``(id, when added or last found live)``."""
        with translate_errors():
            found = self._client().zrange(keys.app_live_games_key(app_id), 0, -1, withscores=True)
        return [(_text(member), float(score) / 1000) for member, score in found]

    def oldest(self, app_id: str, before: float, count: int) -> list[str]:
        """Up to ``count`` of ``app_id``'s games last found live before ``before``."""
        with translate_errors():
            found = self._client().zrangebyscore(
                keys.app_live_games_key(app_id), "-inf", int(before * 1000), start=0, num=count
            )
        return [_text(member) for member in found]

    def may_heal(self, app_id: str, seconds: float) -> bool:
        """Whether ``app_id``'s games may be read all now: True at most once every
        ``seconds`` across every instance (``t13:app:{<app id>}:healed``, kept that long)."""
        with translate_errors():
            return bool(
                self._client().set(
                    keys.app_live_games_key(app_id) + ":healed",
                    b"1",
                    nx=True,
                    px=int(seconds * 1000),
                )
            )

    def drop(self, app_id: str, game_ids: Sequence[str]) -> None:
        """Count ``game_ids`` no more (ended, or gone)."""
        if game_ids:
            with translate_errors():
                self._client().zrem(keys.app_live_games_key(app_id), *game_ids)

    def seen(self, app_id: str, game_ids: Sequence[str]) -> None:
        """Note ``game_ids``, still counted, as found live now."""
        if game_ids:
            now = int(time.time() * 1000)
            with translate_errors():
                self._client().zadd(
                    keys.app_live_games_key(app_id), dict.fromkeys(game_ids, now), xx=True
                )
