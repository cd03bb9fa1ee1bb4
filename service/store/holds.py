"""What one client address holds in the lobby, in Redis: its seats in listed games
and its listed games waiting for players, so that one client cannot take every
seat of the lobby, nor fill its listing (the caps are the API's:
:mod:`service.hosting.lobby_caps`).

Per address two sorted sets under one hash tag (:func:`~service.store.keys.address_key`),
so one script checks and changes both on Redis Cluster too: ``seats`` (members
``<game>:<seat>:<created ms>``, or a short-lived placeholder ``?<nonce>`` while a
quick-join looks for its seat) and ``listed`` (members ``<game>``), each scored by
the time after which it counts no more (ms).  Every script first drops what has
expired, so the sets are pruned on every use and never drift like a counter: a
member the API could not remove (its request failed half way) counts until its
score, or until the API, at the cap, finds its game no longer holding it and
drops it (:meth:`AddressHolds.drop`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from service.store import keys
from service.store.failures import translate_errors
from service.store.redis_client import RedisClient

HOLD_SCRIPT = """
-- Change what an address holds, within its caps: drop some members, then add others.
-- KEYS[1] its seats (sorted set, score: expiry ms), KEYS[2] its listed games (same)
-- ARGV[1] now (ms), ARGV[2] most seats (0: no cap), ARGV[3] most listed games (0: no
-- cap), ARGV[4] listed game to drop ("" none), ARGV[5] listed game to add ("" none),
-- ARGV[6] its expiry (ms), ARGV[7] seats to drop (n), ARGV[8] seats to add (m), then
-- the n seat members to drop, then m pairs (expiry ms, seat member) to add
-- Returns {0} when done; else {1, 'seats' or 'listed', how many it holds} and
-- changes nothing.  Members past their expiry are dropped first (both sets); a key
-- expires with its last member.
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local n, m = tonumber(ARGV[7]), tonumber(ARGV[8])
local dropping = {}
for i = 1, n do dropping[ARGV[8 + i]] = true end
local held = redis.call('ZCARD', KEYS[1])
for member in pairs(dropping) do
  if redis.call('ZSCORE', KEYS[1], member) then held = held - 1 end
end
local more = 0
for i = 1, m do
  local member = ARGV[8 + n + 2 * i]
  if dropping[member] or not redis.call('ZSCORE', KEYS[1], member) then more = more + 1 end
end
local most = tonumber(ARGV[2])
if most > 0 and more > 0 and held + more > most then
  return {1, 'seats', held}
end
local listed = redis.call('ZCARD', KEYS[2])
if ARGV[4] ~= '' and redis.call('ZSCORE', KEYS[2], ARGV[4]) then listed = listed - 1 end
local adding = ARGV[5] ~= '' and (ARGV[5] == ARGV[4] or not redis.call('ZSCORE', KEYS[2], ARGV[5]))
if adding then listed = listed + 1 end
most = tonumber(ARGV[3])
if most > 0 and adding and listed > most then
  return {1, 'listed', listed - 1}
end
for member in pairs(dropping) do redis.call('ZREM', KEYS[1], member) end
if ARGV[4] ~= '' then redis.call('ZREM', KEYS[2], ARGV[4]) end
for i = 1, m do
  redis.call('ZADD', KEYS[1], ARGV[7 + n + 2 * i], ARGV[8 + n + 2 * i])
end
if ARGV[5] ~= '' then redis.call('ZADD', KEYS[2], ARGV[6], ARGV[5]) end
for _, key in ipairs(KEYS) do
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if #newest > 0 then redis.call('PEXPIREAT', key, newest[2]) end
end
return {0}
"""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a change was refused: the cap it would pass (``seats`` or ``listed``) and
    how many the address holds."""

    cap: str
    held: int


@dataclass(frozen=True, slots=True)
class Held:
    """What an address holds now (members not yet expired)."""

    seats: list[str]
    listed: list[str]


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class AddressHolds:
    """The Redis calls of the lobby's caps per address (thread-safe; one per store)."""

    def __init__(self, client: Callable[[], RedisClient]) -> None:
        self._client = client
        self._script: Any = None

    def change(
        self,
        address: str,
        *,
        most_seats: int,
        most_listed: int,
        add_seats: Sequence[tuple[str, float]] = (),
        drop_seats: Sequence[str] = (),
        add_listed: tuple[str, float] | None = None,
        drop_listed: str | None = None,
    ) -> Refusal | None:
        """Drop ``drop_seats`` and ``drop_listed``, then add ``add_seats`` and
        ``add_listed`` (each ``(member, expiry as Unix time)``), unless that would
        leave ``address`` holding more than ``most_seats`` seats or ``most_listed``
        listed games (0: no cap; a change adding nothing is never refused): then
        nothing changes and the :class:`Refusal` says why.  Atomic."""
        client = self._client()
        if self._script is None:
            self._script = client.register_script(HOLD_SCRIPT)
        listed, listed_expiry = add_listed if add_listed is not None else ("", 0.0)
        args: list[Any] = [
            _ms(time.time()),
            most_seats,
            most_listed,
            drop_listed or "",
            listed,
            _ms(listed_expiry),
            len(drop_seats),
            len(add_seats),
            *drop_seats,
        ]
        for member, expiry in add_seats:
            args += [_ms(expiry), member]
        with translate_errors():
            answer = self._script(keys=self._keys(address), args=args)
        if int(answer[0]) == 0:
            return None
        return Refusal(_text(answer[1]), int(answer[2]))

    def held(self, address: str) -> Held:
        """What ``address`` holds now."""
        now = _ms(time.time())
        seats_key, listed_key = self._keys(address)
        with translate_errors():
            pipe = self._client().pipeline(transaction=False)
            pipe.zrangebyscore(seats_key, f"({now}", "+inf")
            pipe.zrangebyscore(listed_key, f"({now}", "+inf")
            seats, listed = pipe.execute()
        return Held([_text(m) for m in seats], [_text(m) for m in listed])

    def drop(self, address: str, seats: Sequence[str] = (), listed: Sequence[str] = ()) -> None:
        """Let ``address`` hold ``seats`` and ``listed`` no more."""
        if not seats and not listed:
            return
        seats_key, listed_key = self._keys(address)
        with translate_errors():
            pipe = self._client().pipeline(transaction=False)
            if seats:
                pipe.zrem(seats_key, *seats)
            if listed:
                pipe.zrem(listed_key, *listed)
            pipe.execute()

    @staticmethod
    def _keys(address: str) -> list[str]:
        return [keys.address_key(address, "seats"), keys.address_key(address, "listed")]
