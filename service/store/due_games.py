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

A worker *claims* a slot's due games (:meth:`~service.store.slot_queues.SlotQueue.claim`):
in one script, those due by now are re-scored to the end of a lease, so no other worker
takes them meanwhile, and a worker that dies leaves them due again when the lease ends.
The worker's own
write of the game replaces the claim by the game's next due time; a claim that wrote
nothing is given back (:meth:`DueGames.release`).  An entry whose game is gone
(expired, deleted) is dropped by the release.
"""

from __future__ import annotations

from service.store import keys
from service.store.failures import translate_errors
from service.store.redis_client import RedisClient
from service.store.slot_queues import SlotQueue

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


class DueGames(SlotQueue):
    """The bot workers' side of the due games (the writes' side is their script)."""

    def __init__(self, client: RedisClient) -> None:
        super().__init__(client, keys.DUE, keys.BOT_HINT)
        self._release = client.register_script(RELEASE_SCRIPT)

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
