"""A queue of games per hash slot, claimed with a lease: the shape of the due games
(:mod:`service.store.due_games`) and of the finished games to archive
(:mod:`service.store.archives`).

* ``t13:{<slot tag>}:<kind>`` sorted set, in that very slot (so the write that adds a
  game is atomic with it on a cluster; see :func:`service.store.keys.outbox_tag`) --
  member a game id, score when it is due (ms).
* A worker *claims* a slot's due games (:meth:`SlotQueue.claim`): in one script, those
  due by now are re-scored to the end of a lease, so no other worker takes them
  meanwhile, and a worker that dies leaves them due again when the lease ends.
* The writes publish ``"<slot> <due ms>"`` on the queue's hint channel, so that a
  worker need not poll (:meth:`SlotQueue.hints`); sweeps (:meth:`SlotQueue.earliest`)
  find what a hint missed.
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
-- Claim the games of one slot that are due: re-score each to the end of the claim's
-- lease (it is due again then, should the worker die).
-- KEYS[1] the slot's queue
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


class SlotQueue:
    """One kind of per-slot queue (``kind``: :data:`~service.store.keys.DUE`,
    :data:`~service.store.keys.FINISHED`), its hints on ``hint_channel``."""

    def __init__(self, client: RedisClient, kind: str, hint_channel: str) -> None:
        self._client = client
        self._kind = kind
        self._hint_channel = hint_channel
        self._claim = client.register_script(CLAIM_SCRIPT)

    def key(self, slot: int) -> str:
        """The queue of ``slot``."""
        return keys.outbox_key(slot, self._kind)

    def earliest(self, slots: range = range(keys.SLOTS)) -> Iterator[tuple[int, int]]:
        """``(slot, its earliest due time in ms)`` of the slots among ``slots`` that
        have a game queued (due now or later), looked at :data:`SLOTS_PER_ROUND_TRIP`
        at a time."""
        for start in range(slots.start, slots.stop, SLOTS_PER_ROUND_TRIP):
            batch = range(start, min(start + SLOTS_PER_ROUND_TRIP, slots.stop))
            with translate_errors():
                pipe = self._client.pipeline(transaction=False)
                for slot in batch:
                    pipe.zrange(self.key(slot), 0, 0, withscores=True)
                found = pipe.execute()
            for slot, first in zip(batch, found, strict=True):
                if first:
                    yield slot, int(first[0][1])

    def claim(
        self, slot: int, now_ms: int, lease_ms: int, most: int
    ) -> tuple[list[tuple[str, int]], int | None]:
        """Up to ``most`` games of ``slot`` due by ``now_ms``, each with when it was
        due (ms), claimed until ``now_ms + lease_ms`` (the claim's score); and the
        slot's earliest due time after the claim (ms; None: nothing left)."""
        with translate_errors():
            reply = self._claim(keys=[self.key(slot)], args=[now_ms, now_ms + lease_ms, most])
        first, taken = int(float(reply[0])), reply[1:]
        games = [
            (raw.decode() if isinstance(raw, bytes) else str(raw), int(float(score)))
            for raw, score in zip(taken[::2], taken[1::2], strict=True)
        ]
        return games, None if first < 0 else first

    def hints(self) -> Any:
        """A pub/sub subscribed to the queue's hints (its confirmation is the first
        message)."""
        with translate_errors():
            pubsub = self._client.pubsub()
            pubsub.subscribe(self._hint_channel)
        return pubsub
