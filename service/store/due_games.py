"""The games with a turn due -- a bot's or a turn timer's -- as the bot workers see them.

Layout (one sorted set per hash slot, in that very slot, like the webhook outbox; see
:func:`service.store.keys.outbox_tag`):

* ``t13:{<slot tag>}:due`` sorted set -- member a game id, score when its turn is due
  (ms).  Every write of a game (:mod:`service.store.scripts`) sets the game's entry from
  the turn deadline it stores, in the same script: a bot's turn is due at once, a
  human's when the turn timer runs out, and a game with no deadline (waiting, finished,
  no timer) has no entry.  A write that leaves a turn due also publishes it
  on :data:`~service.store.keys.BOT_HINT` (``"<slot> <due ms>"``): a worker wakes at
  once for a bot's turn, and sets a timer for a turn timer's.

A worker *claims* a slot's due games (:meth:`DueGames.claim`): in one script, those due
by now are re-scored to the end of a lease, so no other worker takes them meanwhile,
and a worker that dies leaves them due again when the lease ends.  The worker's own
write of the game replaces the claim by the game's next due time; a claim that wrote
nothing is given back (:meth:`DueGames.release`).  An entry whose game is gone
(expired, deleted) is dropped by the release.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from service.store import keys
from service.store.failures import translate_errors
from service.store.redis_client import RedisClient

SLOTS_PER_ROUND_TRIP = 1024
"""Slots a sweep looks at in one pipelined round trip."""

CLAIM_SCRIPT = """
-- Claim the games of one slot whose turn is due: re-score each to the end of the
-- claim's lease (it is due again then, should the worker die).
-- KEYS[1] the slot's due games
-- ARGV[1] now (ms), ARGV[2] the lease's end (ms), ARGV[3] the most to take
-- Returns {the slot's earliest due time after the claim (ms; -1: none), then each game
-- claimed and the time it was due (ms), the earliest due first...}.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, ARGV[3])
for i = 1, #due, 2 do
  redis.call('ZADD', KEYS[1], ARGV[2], due[i])
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
table.insert(due, 1, first[2] or '-1')
return due
"""

RELEASE_SCRIPT = """
-- Give back a claim its worker wrote nothing for: unless a write of the game replaced
-- it, the entry is scored by the game's stored turn deadline again -- or removed when
-- there is none, it is not ahead of now (nothing was playable), or the game is gone.
-- KEYS[1] the slot's due games, KEYS[2] the game's state hash
-- ARGV[1] the game id, ARGV[2] the claim's score (ms), ARGV[3] now (ms)
-- Returns the entry's new score (ms, rounded up as the writes round it), or -1 when it
-- was removed or left alone.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return -1 end
local deadline = redis.call('HGET', KEYS[2], 't')
if deadline and deadline ~= '' and tonumber(deadline) * 1000 > tonumber(ARGV[3]) then
  local due_ms = math.ceil(tonumber(deadline) * 1000)
  redis.call('ZADD', KEYS[1], due_ms, ARGV[1])
  return due_ms
end
redis.call('ZREM', KEYS[1], ARGV[1])
return -1
"""


class DueGames:
    """The bot workers' side of the due games (the writes' side is their script)."""

    def __init__(self, client: RedisClient) -> None:
        self._client = client
        self._claim = client.register_script(CLAIM_SCRIPT)
        self._release = client.register_script(RELEASE_SCRIPT)

    def earliest(self, slots: range = range(keys.SLOTS)) -> Iterator[tuple[int, int]]:
        """``(slot, its earliest due time in ms)`` of the slots among ``slots`` that
        have a game due (now or later), looked at :data:`SLOTS_PER_ROUND_TRIP` at a time."""
        for start in range(slots.start, slots.stop, SLOTS_PER_ROUND_TRIP):
            batch = range(start, min(start + SLOTS_PER_ROUND_TRIP, slots.stop))
            with translate_errors():
                pipe = self._client.pipeline(transaction=False)
                for slot in batch:
                    pipe.zrange(keys.outbox_key(slot, keys.DUE), 0, 0, withscores=True)
                found = pipe.execute()
            for slot, first in zip(batch, found, strict=True):
                if first:
                    yield slot, int(first[0][1])

    def claim(
        self, slot: int, now_ms: int, lease_ms: int, most: int
    ) -> tuple[list[tuple[str, int]], int | None]:
        """Up to ``most`` games of ``slot`` due by ``now_ms``, each with when it was
        due (ms), claimed until ``now_ms + lease_ms`` (the claim's score, for
        :meth:`release`); and the slot's earliest due time after the claim (ms; None:
        nothing left)."""
        with translate_errors():
            reply = self._claim(
                keys=[keys.outbox_key(slot, keys.DUE)], args=[now_ms, now_ms + lease_ms, most]
            )
        first, taken = int(float(reply[0])), reply[1:]
        games = [
            (raw.decode() if isinstance(raw, bytes) else str(raw), int(float(score)))
            for raw, score in zip(taken[::2], taken[1::2], strict=True)
        ]
        return games, None if first < 0 else first

    def release(self, game_id: str, claimed_until_ms: int, now_ms: int) -> int | None:
        """Give back a claim on ``game_id`` (scored ``claimed_until_ms``) that wrote
        nothing: the game's due time again (ms) if it has one ahead, which nobody was
        told of (the releasing worker sets its timer); None when the entry was dropped,
        or replaced by a write meanwhile."""
        due = keys.outbox_key(keys.slot_of(game_id), keys.DUE)
        with translate_errors():
            restored = self._release(
                keys=[due, keys.key(game_id, keys.STATE)],
                args=[game_id, claimed_until_ms, now_ms],
            )
        return None if int(restored) < 0 else int(restored)

    def due_at(self, game_id: str) -> float | None:
        """When ``game_id``'s turn is due (s since the epoch), None when it has no entry."""
        with translate_errors():
            score = self._client.zscore(keys.outbox_key(keys.slot_of(game_id), keys.DUE), game_id)
        return None if score is None else float(score) / 1000

    def hints(self) -> Any:
        """A pub/sub subscribed to :data:`~service.store.keys.BOT_HINT` (its
        confirmation is the first message)."""
        with translate_errors():
            pubsub = self._client.pubsub()
            pubsub.subscribe(keys.BOT_HINT)
        return pubsub
