"""Finished games' archives and their players' histories, as Redis keeps them.

Layout (:mod:`service.store.keys`):

* ``t13:{<slot tag>}:finished`` sorted set, one per hash slot, in that slot (like the
  due games, :mod:`service.store.due_games`) -- member a game id, score when it
  finished (ms), or once claimed the end of the claim's lease.  The write that
  finishes a game adds it, in the write's own script (:mod:`service.store.scripts`),
  and publishes ``"<slot> <ms>"`` on :data:`~service.store.keys.ARCHIVE_HINT`; the
  finishing time is also kept in the game's state hash (field ``e``).
* ``t13:archive:{<game id>}`` string -- the game's archive: bytes made by
  :mod:`service.hosting.archiving` (compressed versioned JSON), written once
  (``SET NX``) with its own TTL (``ARCHIVE_TTL_SECONDS``).
* ``t13:history:{<player>}:games`` sorted set (every score 0, member
  ``<finished ms, 15 digits>:<game id>``: a total order, newest last) and
  ``t13:history:{<player>}:entries`` hash (game id -> the entry's JSON): one
  player's finished games, in a slot of the player's (not the game's), written after
  the archive, idempotently; entries older than the archives' TTL are dropped by
  each addition, and both keys expire that long after the last.

An archiver *claims* a slot's finished games as the bot workers claim due games
(the same script: re-scored to the end of a lease), and removes an entry once the
archive and every history entry are written (:meth:`FinishedGames.done`); a worker
that dies leaves its claims, taken over when their lease ends.
"""

from __future__ import annotations

from typing import Any

from service.store import keys
from service.store.failures import translate_errors
from service.store.redis_client import RedisClient
from service.store.slot_queues import SlotQueue

DONE_SCRIPT = """
-- Remove a finished game's entry once it is archived, unless another claim replaced
-- the one whose work is done (that worker removes it when done).
-- KEYS[1] the slot's finished games
-- ARGV[1] the game id, ARGV[2] the claim's score (ms)
-- Returns 1 if removed, else 0.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
"""

HISTORY_SCRIPT = """
-- Add a finished game to a player's history (again: nothing changes), drop the
-- entries finished before the cutoff, and keep both keys the archives' TTL.
-- KEYS[1] the history's sorted set, KEYS[2] its entries hash
-- ARGV[1] the member (<finished ms>:<game id>), ARGV[2] the game id, ARGV[3] the
-- entry's JSON, ARGV[4] the cutoff member (<ms>:), ARGV[5] the TTL (s)
-- Returns the number of entries dropped.
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local old = redis.call('ZRANGEBYLEX', KEYS[1], '-', '(' .. ARGV[4], 'LIMIT', 0, 100)
for i = 1, #old do
  redis.call('ZREM', KEYS[1], old[i])
  redis.call('HDEL', KEYS[2], string.sub(old[i], string.find(old[i], ':') + 1))
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return #old
"""

PAGE_SCRIPT = """
-- A page of a player's history, newest first, after a cursor.
-- KEYS[1] the history's sorted set, KEYS[2] its entries hash
-- ARGV[1] the cursor ("" = from the newest: the member last given), ARGV[2] the most
-- Returns {member, entry JSON (false: missing), ...}.
local top = '+'
if ARGV[1] ~= '' then top = '(' .. ARGV[1] end
local members = redis.call('ZREVRANGEBYLEX', KEYS[1], top, '-', 'LIMIT', 0, ARGV[2])
local out = {}
for i = 1, #members do
  local member = members[i]
  out[2 * i - 1] = member
  out[2 * i] = redis.call('HGET', KEYS[2], string.sub(member, string.find(member, ':') + 1))
end
return out
"""


def history_member(finished_ms: int, game_id: str) -> str:
    """The member of a game in a player's history: ordered by when it finished.

    >>> history_member(1500, "g1")
    '000000000001500:g1'
    """
    return f"{finished_ms:015d}:{game_id}"


class FinishedGames(SlotQueue):
    """The archivers' side of the finished games (the writes' side is their script)."""

    def __init__(self, client: RedisClient) -> None:
        super().__init__(client, keys.FINISHED, keys.ARCHIVE_HINT)
        self._done = client.register_script(DONE_SCRIPT)

    def done(self, game_id: str, claimed_until_ms: int) -> bool:
        """Remove ``game_id``'s entry, archived under the claim scored
        ``claimed_until_ms`` (False: another claim replaced it meanwhile)."""
        queue = keys.outbox_key(keys.slot_of(game_id), keys.FINISHED)
        with translate_errors():
            return bool(self._done(keys=[queue], args=[game_id, claimed_until_ms]))

    def queued(self, game_id: str) -> int | None:
        """The score of ``game_id``'s entry (ms), None when it has none."""
        queue = keys.outbox_key(keys.slot_of(game_id), keys.FINISHED)
        with translate_errors():
            score = self._client.zscore(queue, game_id)
        return None if score is None else int(score)


class Archives:
    """Finished games' archives and the players' histories (see the module's docstring)."""

    def __init__(self, client: Any) -> None:
        """``client``: a function returning the store's client (connected lazily)."""
        self._client = client

    def finished_at(self, game_id: str) -> int | None:
        """When the write that finished ``game_id`` was made (ms), from its live keys."""
        with translate_errors():
            raw = self._client().hget(keys.key(game_id, keys.STATE), "e")
        return None if raw is None else int(raw)

    def load(self, game_id: str) -> bytes | None:
        """The archive of ``game_id``, None when it has none (not archived, or expired)."""
        with translate_errors():
            raw = self._client().get(keys.archive_key(game_id))
        return None if raw is None else bytes(raw)

    def save(self, game_id: str, archive: bytes, ttl_seconds: int) -> bool:
        """Keep ``archive`` for ``ttl_seconds`` unless the game has one already (the
        first stays: False)."""
        with translate_errors():
            made = self._client().set(keys.archive_key(game_id), archive, ex=ttl_seconds, nx=True)
        return bool(made)

    def add_history(
        self,
        holder: str,
        game_id: str,
        finished_ms: int,
        entry: bytes,
        *,
        cutoff_ms: int,
        ttl_seconds: int,
    ) -> None:
        """Add ``game_id`` (finished at ``finished_ms``) to the history of the player
        whose seat holder is ``holder``, with its ``entry``; drop entries finished
        before ``cutoff_ms``.  Again for the same game: nothing changes."""
        client = self._client()
        with translate_errors():
            client.register_script(HISTORY_SCRIPT)(
                keys=[keys.history_key(holder, "games"), keys.history_key(holder, "entries")],
                args=[
                    history_member(finished_ms, game_id),
                    game_id,
                    entry,
                    f"{cutoff_ms:015d}:",
                    ttl_seconds,
                ],
            )

    def history(self, holder: str, after: str | None, limit: int) -> list[tuple[str, bytes]]:
        """Up to ``limit`` ``(member, entry JSON)`` of the player's history, newest
        first, after the member ``after`` (None: from the newest)."""
        client = self._client()
        with translate_errors():
            reply = client.register_script(PAGE_SCRIPT)(
                keys=[keys.history_key(holder, "games"), keys.history_key(holder, "entries")],
                args=[after or "", limit],
            )
        out = []
        for member, entry in zip(reply[::2], reply[1::2], strict=True):
            if entry:
                out.append((member.decode() if isinstance(member, bytes) else str(member), entry))
        return out
