"""The webhook outbox: deliveries queued atomically with the writes that made them,
taken and acknowledged by the delivery workers through Redis' consumer groups.

Layout (all in one hash slot per outbox; see :func:`service.store.keys.outbox_tag`):

* ``t13:{<slot tag>}:hooks`` stream, consumer group ``deliver`` -- the deliveries of the
  games of one hash slot that are due now.  A game's write script adds its deliveries
  here (the key is in the game's own slot, so it is the same atomic script) and
  publishes the slot's number on :data:`~service.store.keys.OUTBOX_HINT`.  A worker
  reads new entries with ``XREADGROUP``, and an entry stays pending (in the group's
  PEL) until :meth:`Outbox.settle` acknowledges and deletes it; one left pending
  longer than ``WEBHOOK_CLAIM_SECONDS`` (its worker died) is taken over with
  ``XAUTOCLAIM``.  A worker renews its claim (:meth:`Outbox.renew`) just before each
  attempt, and sends nothing it no longer holds.  An emptied stream is deleted, group
  and consumers with it, so an outbox exists only while it holds deliveries (and a
  sweep finds it by ``EXISTS``).
* ``t13:{<slot tag>}:hooks-later`` sorted set -- deliveries whose next attempt waits
  (scored by its time in ms), moved back into the stream by :meth:`Outbox.promote`.
* ``t13:{<game id>}:hooks-log`` list -- each attempt of the game's deliveries (JSON),
  the last :data:`LOG_ENTRIES`, kept as long as the game.

Settling an attempt (acknowledge, delete, schedule the next one, log it) is one
script, in the slot of the game and of its outbox alike.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import redis

from service.store import keys
from service.store.failures import translate_errors
from service.store.redis_client import RedisClient

log = logging.getLogger(__name__)

LOG_ENTRIES = 200
"""Attempts a game's delivery log keeps (the oldest are dropped)."""

SLOTS_PER_ROUND_TRIP = 1024
"""Outboxes a sweep looks at in one pipelined round trip."""

PROMOTE_SCRIPT = (
    """
-- Move the deliveries of one outbox whose next attempt is due back into its stream.
-- KEYS[1] the outbox stream, KEYS[2] its sorted set of later attempts
-- ARGV[1] now (ms), ARGV[2] the most to move
-- Returns {moved, entries in the stream (new or pending), time of the next later
-- attempt (ms) or -1}
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
if #due > 0 and redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('XGROUP', 'CREATE', KEYS[1], '"""
    + keys.OUTBOX_GROUP
    + """', '0', 'MKSTREAM')
end
for _, member in ipairs(due) do
  local d = cjson.decode(member)
  redis.call('XADD', KEYS[1], '*', 'h', d.h, 'a', d.a, 'b', d.b)
  redis.call('ZREM', KEYS[2], member)
end
local later = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
return {#due, redis.call('XLEN', KEYS[1]), tonumber(later[2] or '-1')}
"""
)

SETTLE_SCRIPT = (
    """
-- Settle one attempt of a delivery: acknowledge and delete its entry (and the stream,
-- group and consumers with it once it is empty: nothing is pending then, and the next
-- write makes them anew), schedule the next attempt if there is one, and log the
-- attempt in the game's delivery log (an app's delivery is logged by the worker, in
-- the app's log: another slot).
-- KEYS[1] the outbox stream, KEYS[2] its sorted set of later attempts, KEYS[3] the
-- game's delivery log (none for an app's delivery)
-- ARGV[1] the entry's id, ARGV[2] the log line, ARGV[3] the most lines kept,
-- ARGV[4] the log's TTL (s), ARGV[5] the next attempt's time (ms; "" = none),
-- ARGV[6] (with ARGV[5]) the next attempt, JSON {h, a, b}
-- Returns 1; 0 if the entry was settled already (taken over by another worker, which
-- settled it first): then nothing is written.
if redis.call('XACK', KEYS[1], '"""
    + keys.OUTBOX_GROUP
    + """', ARGV[1]) == 0 then return 0 end
redis.call('XDEL', KEYS[1], ARGV[1])
if redis.call('XLEN', KEYS[1]) == 0 then redis.call('DEL', KEYS[1]) end
if ARGV[5] ~= '' then redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6]) end
if KEYS[3] then
  redis.call('RPUSH', KEYS[3], ARGV[2])
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[3]), -1)
  redis.call('EXPIRE', KEYS[3], ARGV[4])
end
return 1
"""
)


RENEW_SCRIPT = (
    """
-- Renew a worker's claim on a delivery it took, just before an attempt: its idle time
-- starts again from 0, so no other worker takes it over for WEBHOOK_CLAIM_SECONDS.
-- KEYS[1] the outbox stream; ARGV[1] the entry's id, ARGV[2] the worker (consumer)
-- Returns 1; 0 if the entry is not pending for that worker any more (settled, or
-- taken over by another): then it must not be sent.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local found = redis.call('XPENDING', KEYS[1], '"""
    + keys.OUTBOX_GROUP
    + """', ARGV[1], ARGV[1], 1)
if #found == 0 or found[1][2] ~= ARGV[2] then return 0 end
redis.call('XCLAIM', KEYS[1], '"""
    + keys.OUTBOX_GROUP
    + """', ARGV[2], 0, ARGV[1], 'JUSTID')
return 1
"""
)


@dataclass(frozen=True, slots=True)
class Delivery:
    """One attempt's worth of a queued delivery, as a worker took it."""

    slot: int
    entry_id: bytes
    header: bytes
    """JSON: ``g`` game id, ``u`` URL, ``k`` signing secret, ``t`` the write's time (ms);
    ``a`` the app, for a delivery to an app's webhook."""
    body: bytes
    attempts: int
    """Attempts made before this one."""

    @property
    def game_id(self) -> str:
        return str(orjson.loads(self.header)["g"])

    @property
    def app_id(self) -> str | None:
        """The app whose webhook it is for (None: the game's own webhook)."""
        app = orjson.loads(self.header).get("a")
        return None if app is None else str(app)


class Outbox:
    """The delivery workers' side of the outboxes (the writes' side is their script)."""

    def __init__(self, client: RedisClient, *, log_ttl_seconds: int) -> None:
        self._client = client
        self._log_ttl = log_ttl_seconds
        self._promote = client.register_script(PROMOTE_SCRIPT)
        self._settle = client.register_script(SETTLE_SCRIPT)
        self._renew = client.register_script(RENEW_SCRIPT)

    def occupied(self, slots: range = range(keys.SLOTS)) -> Iterator[int]:
        """The slots among ``slots`` whose outbox holds deliveries (due, pending or
        later), looked at :data:`SLOTS_PER_ROUND_TRIP` at a time."""
        for start in range(slots.start, slots.stop, SLOTS_PER_ROUND_TRIP):
            batch = range(start, min(start + SLOTS_PER_ROUND_TRIP, slots.stop))
            with translate_errors():
                pipe = self._client.pipeline(transaction=False)
                for slot in batch:
                    pipe.exists(
                        keys.outbox_key(slot, keys.OUTBOX), keys.outbox_key(slot, keys.OUTBOX_LATER)
                    )
                found = pipe.execute()
            yield from (slot for slot, count in zip(batch, found, strict=True) if count)

    def promote(self, slot: int, now_ms: int, most: int = 1000) -> tuple[int, int, int | None]:
        """Move ``slot``'s deliveries due by ``now_ms`` into its stream: ``(moved,
        entries in the stream, time of the next later attempt or None)``."""
        with translate_errors():
            moved, length, later = self._promote(
                keys=[keys.outbox_key(slot, keys.OUTBOX), keys.outbox_key(slot, keys.OUTBOX_LATER)],
                args=[now_ms, most],
            )
        return int(moved), int(length), None if int(later) < 0 else int(later)

    def take(self, slot: int, consumer: str, count: int) -> list[Delivery]:
        """Up to ``count`` new deliveries of ``slot``, now pending for ``consumer``."""
        stream = keys.outbox_key(slot, keys.OUTBOX)
        with translate_errors():
            try:
                found = self._client.xreadgroup(
                    keys.OUTBOX_GROUP, consumer, {stream: ">"}, count=count
                )
            except redis.ResponseError as exc:
                if "NOGROUP" in str(exc):
                    return []  # the stream is not there (it never was, or was deleted)
                raise
        return [_delivery(slot, entry) for _stream, entries in found or [] for entry in entries]

    def reclaim(self, slot: int, consumer: str, idle_ms: int, count: int) -> list[Delivery]:
        """Up to ``count`` of ``slot``'s deliveries left pending for at least
        ``idle_ms`` (their worker died), now pending for ``consumer``."""
        stream = keys.outbox_key(slot, keys.OUTBOX)
        with translate_errors():
            try:
                reply = self._client.xautoclaim(
                    stream, keys.OUTBOX_GROUP, consumer, idle_ms, "0-0", count=count
                )
            except redis.ResponseError as exc:
                if "NOGROUP" in str(exc):
                    return []
                raise
        return [_delivery(slot, entry) for entry in reply[1] if entry and entry[1]]

    def renew(self, delivery: Delivery, consumer: str) -> bool:
        """Renew ``consumer``'s claim on ``delivery`` (its idle time back to 0); False
        if it is not ``consumer``'s any more (settled, or taken over)."""
        with translate_errors():
            done = self._renew(
                keys=[keys.outbox_key(delivery.slot, keys.OUTBOX)],
                args=[delivery.entry_id, consumer],
            )
        return bool(done)

    def settle(self, delivery: Delivery, line: dict[str, Any], retry_at_ms: int | None) -> bool:
        """Acknowledge ``delivery``'s attempt and log ``line``; queue its next attempt
        for ``retry_at_ms`` unless None.  False if it was settled already."""
        retry: list[bytes | str | int] = ["", ""]
        if retry_at_ms is not None:
            member = {
                "h": delivery.header.decode(),
                "a": delivery.attempts + 1,
                "b": delivery.body.decode(),
            }
            retry = [retry_at_ms, orjson.dumps(member)]
        stream = keys.outbox_key(delivery.slot, keys.OUTBOX)
        later = keys.outbox_key(delivery.slot, keys.OUTBOX_LATER)
        logged = [] if delivery.app_id is not None else [keys.key(delivery.game_id, keys.HOOK_LOG)]
        with translate_errors():
            done = self._settle(
                keys=[stream, later, *logged],
                args=[delivery.entry_id, orjson.dumps(line), LOG_ENTRIES, self._log_ttl, *retry],
            )
        return bool(done)

    def hints(self) -> Any:
        """A pub/sub subscribed to :data:`~service.store.keys.OUTBOX_HINT` (its
        confirmation is the first message)."""
        with translate_errors():
            pubsub = self._client.pubsub()
            pubsub.subscribe(keys.OUTBOX_HINT)
        return pubsub


QUEUE_SCRIPT = (
    """
-- Queue one delivery in an outbox (a delivery sent again on request) and wake the
-- workers.
-- KEYS[1] the outbox stream; ARGV[1] its slot, ARGV[2] the header, ARGV[3] the body
-- Returns 1.
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('XGROUP', 'CREATE', KEYS[1], '"""
    + keys.OUTBOX_GROUP
    + """', '0', 'MKSTREAM')
end
redis.call('XADD', KEYS[1], '*', 'h', ARGV[2], 'a', 0, 'b', ARGV[3])
redis.call('PUBLISH', '"""
    + keys.OUTBOX_HINT
    + """', ARGV[1])
return 1
"""
)


def queue(client: RedisClient, game_id: str, header: bytes, body: bytes) -> None:
    """Queue a delivery of ``game_id`` (``header`` and ``body`` as a write queues them,
    the body with its ``seq``) in the outbox of the game's slot, due now."""
    slot = keys.slot_of(game_id)
    with translate_errors():
        client.register_script(QUEUE_SCRIPT)(
            keys=[keys.outbox_key(slot, keys.OUTBOX)], args=[slot, header, body]
        )


def read_log(client: RedisClient, game_id: str) -> list[dict[str, Any]]:
    """The attempts logged for ``game_id``'s deliveries, oldest first."""
    with translate_errors():
        lines = client.lrange(keys.key(game_id, keys.HOOK_LOG), 0, -1)
    return [orjson.loads(line) for line in lines]


def _delivery(slot: int, entry: tuple[bytes, dict[bytes, bytes]]) -> Delivery:
    entry_id, fields = entry
    return Delivery(slot, entry_id, fields[b"h"], fields[b"b"], int(fields[b"a"]))
