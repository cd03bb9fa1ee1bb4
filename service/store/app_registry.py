"""Apps and their players in Redis (the records are made and read by
:mod:`service.hosting.apps` and :mod:`service.hosting.players`; here only bytes).

* ``t13:app:{<app id>}`` string -- an app's record, versioned JSON; ``t13:apps`` set --
  every app's id, for listing (another slot than the records: added first, so a
  record is never missing from the list; an id without a record is skipped).
* ``t13:player:{<tag>}`` hash, ``<tag>`` a hash of the app's and the player's ids
  (:func:`~service.store.keys.player_key`): field ``t:<token hash>`` per live token,
  ``"<expiry ms>|<JSON>"``; field ``barred`` while the app bars the player; field
  ``revoked``, when its tokens were last revoked (JWTs issued before are refused).  A token is
  valid while its field is there and its expiry ahead: revoking deletes the fields, so
  the next request anywhere is refused.  The key expires a day after its last token
  (never while barred).
* ``t13:app:{<app id>}:games`` sorted set -- the app's games, members
  ``<created ms, 15 digits>:<game id>`` all scored 0 (so newest first is reverse
  lexical order, and a member is a page's cursor), the latest
  :data:`APP_GAMES_KEPT`, for ``GET /v1/app/games`` (written after the game's own
  write, as a player's index: :meth:`AppRegistry.note_app_game`).
* ``t13:player:{<tag>}:games`` sorted set -- the games where the player took a seat,
  scored by when (ms), for ``GET /v1/me/games`` (another slot than the games: see
  :meth:`AppRegistry.note_game`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.store import keys
from service.store.failures import translate_errors
from service.store.game_reads import Read
from service.store.redis_client import RedisClient

MINT_SCRIPT = """
-- Add a player's token unless the player is barred; drop its expired tokens.
-- KEYS[1] the player's hash
-- ARGV[1] now (ms), ARGV[2] the token's field, ARGV[3] its value ("<expiry ms>|<JSON>"),
-- ARGV[4] its expiry (ms), ARGV[5] how long an expired token is kept (ms: told apart
-- from an unknown one meanwhile)
-- Returns 0 (barred: nothing changed) or 1.
if redis.call('HEXISTS', KEYS[1], 'barred') == 1 then return 0 end
local grace = tonumber(ARGV[5])
local now = tonumber(ARGV[1]) - grace
local latest = tonumber(ARGV[4])
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 't:' then
    local expiry = tonumber(string.match(fields[i + 1], '^(%d+)'))
    if expiry <= now then
      redis.call('HDEL', KEYS[1], fields[i])
    elseif expiry > latest then
      latest = expiry
    end
  end
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIREAT', KEYS[1], latest + grace)
return 1
"""

REVOKE_SCRIPT = """
-- Delete every token of a player and note when (field 'revoked': a JWT issued before is
-- refused); bar it (ARGV[1] "1"), unbar it ("0") or neither ("").
-- KEYS[1] the player's hash
-- ARGV[2] now (seconds), ARGV[3] how long the note must be kept at least (ms)
-- Returns how many tokens were deleted.
local fields = redis.call('HKEYS', KEYS[1])
local n = 0
for _, field in ipairs(fields) do
  if string.sub(field, 1, 2) == 't:' then
    redis.call('HDEL', KEYS[1], field)
    n = n + 1
  end
end
if ARGV[1] == '1' then
  redis.call('HSET', KEYS[1], 'barred', '1')
  redis.call('PERSIST', KEYS[1])
elseif ARGV[1] == '0' then
  redis.call('HDEL', KEYS[1], 'barred')
end
redis.call('HSET', KEYS[1], 'revoked', ARGV[2])
if redis.call('HEXISTS', KEYS[1], 'barred') == 0 then
  local keep = tonumber(ARGV[3])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < keep then redis.call('PEXPIRE', KEYS[1], keep) end
end
return n
"""


APP_GAMES_KEPT = 100_000
"""The most games an app's index keeps (the latest made): a bound on its size,
whatever the app makes."""

EXPIRED_KEPT_SECONDS = 86400
"""How long an expired token is kept, so that it is refused as expired (not unknown);
and the least a revocation is remembered (a JWT lives a day at most)."""


@dataclass(frozen=True, slots=True)
class PlayerState:
    """What every request of a player checks besides its credential."""

    barred: bool
    revoked: float | None
    """When its tokens were last revoked (Unix time), if ever (within a day)."""


def token_field(token_hash: str) -> str:
    """The field of a player's hash holding the token whose hash is ``token_hash``."""
    return f"t:{token_hash}"


PlayerToken = tuple[float, bytes]
"""A live player token's expiry (Unix time) and JSON."""


def player_token_read(tag: str, token_hash: str) -> Read[PlayerToken | None]:
    """:meth:`AppRegistry.player_token` as a :class:`~service.store.game_reads.Read`:
    sent with a game's read in one round trip (:meth:`GameStore.read_both`)."""
    command = ("HMGET", keys.player_key(tag), token_field(token_hash), "barred")
    return Read((command,), _player_token)


def _player_token(replies: list[Any]) -> PlayerToken | None:
    [(value, barred)] = replies
    if value is None or barred is not None:
        return None
    expiry, _, entry = bytes(value).partition(b"|")
    return int(expiry) / 1000, entry


class AppRegistry:
    """Apps and players in Redis; ``client`` gives the (lazily connected) client."""

    def __init__(self, client: Callable[[], RedisClient]) -> None:
        self._client = client

    # -- apps -----------------------------------------------------------------

    def save_app(self, app_id: str, record: bytes, *, new: bool = False) -> bool:
        """Store an app's record; with ``new``, only if no app has this id (False then)."""
        with translate_errors():
            client = self._client()
            if new:
                client.sadd(keys.APPS, app_id)
                return bool(client.set(keys.app_key(app_id), record, nx=True))
            client.set(keys.app_key(app_id), record)
            return True

    def load_app(self, app_id: str) -> bytes | None:
        """An app's record, None if there is no such app."""
        with translate_errors():
            found = self._client().get(keys.app_key(app_id))
        return None if found is None else bytes(found)

    def app_ids(self) -> list[str]:
        """Every app's id, sorted."""
        with translate_errors():
            members = self._client().smembers(keys.APPS)
        return sorted(m.decode() if isinstance(m, bytes) else str(m) for m in members)

    # -- players --------------------------------------------------------------

    def add_player_token(self, tag: str, token_hash: str, entry: bytes, expiry: float) -> bool:
        """Keep a player's new token (``entry``: its JSON) until ``expiry`` (a Unix
        time); False, and nothing kept, when the player is barred."""
        expiry_ms = int(expiry * 1000)
        with translate_errors():
            client = self._client()
            done = client.register_script(MINT_SCRIPT)(
                keys=[keys.player_key(tag)],
                args=[
                    int(time.time() * 1000),
                    token_field(token_hash),
                    str(expiry_ms).encode() + b"|" + entry,
                    expiry_ms,
                    EXPIRED_KEPT_SECONDS * 1000,
                ],
            )
        return bool(done)

    def player_token(self, tag: str, token_hash: str) -> PlayerToken | None:
        """``(expiry, JSON)`` of a player's token, None when it is unknown or revoked
        (or the player barred): one round trip."""
        read = player_token_read(tag, token_hash)
        with translate_errors():
            return read.parse([self._client().execute_command(*read.commands[0])])

    def revoke_player(self, tag: str, bar: bool | None = None) -> int:
        """Delete every token of a player (how many); ``bar`` True bars the player,
        False lifts its bar, None leaves it."""
        flag = "" if bar is None else ("1" if bar else "0")
        with translate_errors():
            client = self._client()
            deleted = client.register_script(REVOKE_SCRIPT)(
                keys=[keys.player_key(tag)],
                args=[flag, repr(time.time()), EXPIRED_KEPT_SECONDS * 1000],
            )
        return int(deleted)

    def player_state(self, tag: str) -> PlayerState:
        """Whether the player is barred, and when its tokens were last revoked: one read."""
        with translate_errors():
            barred, revoked = self._client().hmget(keys.player_key(tag), ["barred", "revoked"])
        return PlayerState(barred is not None, None if revoked is None else float(revoked))

    def is_barred(self, tag: str) -> bool:
        """Whether the app bars this player."""
        with translate_errors():
            return bool(self._client().hexists(keys.player_key(tag), "barred"))

    def note_game(self, tag: str, game_id: str, ttl_seconds: int) -> None:
        """Note that the player took a seat of ``game_id``, now.  Written after the
        game's own write (the index is in another slot than the game): a seat taken
        by a request that failed after it is missing until the player's next seat;
        a game left or gone is dropped by the reader (:meth:`forget_games`)."""
        key = keys.player_key(tag, "games")
        with translate_errors():
            pipe = self._client().pipeline(transaction=False)
            pipe.zadd(key, {game_id: int(time.time() * 1000)})
            pipe.expire(key, ttl_seconds)
            pipe.execute()

    def player_games(self, tag: str, limit: int) -> list[str]:
        """The ids of the games the player took a seat in, the latest first."""
        with translate_errors():
            found = self._client().zrevrange(keys.player_key(tag, "games"), 0, limit - 1)
        return [g.decode() if isinstance(g, bytes) else str(g) for g in found]

    def forget_games(self, tag: str, game_ids: list[str]) -> None:
        """Drop games from the player's index (gone, or no longer holding the player)."""
        if game_ids:
            with translate_errors():
                self._client().zrem(keys.player_key(tag, "games"), *game_ids)

    # -- an app's games ---------------------------------------------------------

    def note_app_game(self, app_id: str, member: str) -> None:
        """Add a game to the app's index (``member``: ``<created ms>:<game id>``),
        keeping the latest :data:`APP_GAMES_KEPT`.  Written after the game's own
        write (another slot): a game whose request failed after it is missing; a
        game gone is dropped by the reader (:meth:`forget_app_games`)."""
        key = keys.app_games_key(app_id)
        with translate_errors():
            pipe = self._client().pipeline(transaction=False)
            pipe.zadd(key, {member: 0})
            pipe.zremrangebyrank(key, 0, -APP_GAMES_KEPT - 1)
            pipe.execute()

    def app_games(self, app_id: str, before: str | None, count: int) -> list[str]:
        """Up to ``count`` members of the app's index, the newest first, from the
        one after ``before`` (a member: a page's cursor) on."""
        high = "+" if before is None else "(" + before
        with translate_errors():
            found = self._client().zrevrangebylex(
                keys.app_games_key(app_id), high, "-", start=0, num=count
            )
        return [m.decode() if isinstance(m, bytes) else str(m) for m in found]

    def forget_app_games(self, app_id: str, members: list[str]) -> None:
        """Drop members from the app's index (their games are gone)."""
        if members:
            with translate_errors():
                self._client().zrem(keys.app_games_key(app_id), *members)
