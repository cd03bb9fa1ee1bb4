"""The Lua scripts of the game store's writes, as module constants.

Each starts with a ``KEYS``/``ARGV`` header: what the script reads and writes
and what it returns.  :class:`~service.store.game_store.GameStore` registers
them (``EVALSHA``); every key a script touches is passed in ``KEYS`` and lives in
its game's hash slot, so they run on Redis Cluster too.
"""

from service.store.keys import ARCHIVE_HINT, BOT_HINT, OUTBOX_GROUP, OUTBOX_HINT

# Appends events to the stream and, if there were any, publishes them on the game's
# wake-up channel (keys.WAKE: the state key KEYS[1] with `state` replaced by `wake`,
# in the same slot): "<first seq> <turn deadline> <tag of the event before>\n", then
# "<seat> <length> <tag>\n<event>" per event (see service.store.wakeups.parse_wake_up).
# Each event is stored with its tag (field g): the digest given for it in ARGV, then
# the epoch of the server (service.store.history).  Expects locals `seq` (last seq),
# `n` (number of events), `first` (ARGV index of the first event's seat: seat, event,
# digest triples follow), `deadline`, `tag` (the last event's tag, "" = none) and
# `epoch`; leaves `seq` and `tag` updated.  Then queues the write's webhook deliveries
# in the outbox of its slot (the last of KEYS, when there are any): ARGV ends with the
# slot, then an (index of the event among the write's, header, body) triple per
# delivery, then their number m (0: none, and no outbox key), then one last argument
# (when the write finishes the game, see _QUEUE_FINISHED); each body gets its event's
# seq, and the slot is published on keys.OUTBOX_HINT.
_APPEND_EVENTS = (
    """
local lines = {}
local before = tag
for i = 0, n - 1 do
  seq = seq + 1
  local seat, event = ARGV[first + 3 * i], ARGV[first + 3 * i + 1]
  tag = ARGV[first + 3 * i + 2] .. epoch
  redis.call('XADD', KEYS[2], string.format('%d-0', seq), 'seat', seat, 'e', event, 'g', tag)
  lines[i + 1] = seat .. ' ' .. #event .. ' ' .. tag .. '\\n' .. event
end
if n > 0 then
  redis.call('SPUBLISH', string.sub(KEYS[1], 1, -6) .. 'wake',
             string.format('%d ', seq - n + 1) .. deadline .. ' ' .. before .. '\\n'
             .. table.concat(lines))
end
local m = tonumber(ARGV[#ARGV - 1])
if m > 0 then
  local outbox, at = KEYS[#KEYS], #ARGV - 1 - 3 * m
  if redis.call('EXISTS', outbox) == 0 then
    redis.call('XGROUP', 'CREATE', outbox, '"""
    + OUTBOX_GROUP
    + """', '0', 'MKSTREAM')
  end
  for j = 0, m - 1 do
    local event_seq = seq - n + 1 + tonumber(ARGV[at + 3 * j])
    redis.call('XADD', outbox, '*', 'h', ARGV[at + 3 * j + 1], 'a', 0, 'b',
               '{"seq":' .. event_seq .. ',' .. string.sub(ARGV[at + 3 * j + 2], 2))
  end
  redis.call('PUBLISH', '"""
    + OUTBOX_HINT
    + """', ARGV[at - 1])
end
"""
)

# Keeps the game's entry in its slot's set of due games (KEYS[3], keys.DUE) in step with
# the turn deadline just stored: scored by it (ms, rounded up: a game claimed at its
# score is overdue), or removed when there is none; a
# scored one is published on keys.BOT_HINT as "<slot> <due ms>", waking the bot workers
# (or setting their timers).  Expects `deadline` and `due` (ARGV index of the game id;
# its slot follows).
_KEEP_DUE = (
    """
if deadline ~= '' then
  local due_ms = math.ceil(tonumber(deadline) * 1000)
  redis.call('ZADD', KEYS[3], due_ms, ARGV[due])
  redis.call('PUBLISH', '"""
    + BOT_HINT
    + """', ARGV[due + 1] .. ' ' .. string.format('%d', due_ms))
else
  redis.call('ZREM', KEYS[3], ARGV[due])
end
"""
)

# Queues the game in its slot's finished games (KEYS[4], keys.FINISHED) when this write
# finishes it (the last ARGV: when, ms; "" = it does not): kept in the state hash
# (field e), added to the queue unless there, and published on keys.ARCHIVE_HINT as
# "<slot> <finished ms>", waking the archivers (service.store.archives).  In the
# write's own script, so a finished game is queued exactly when its finishing write
# lands.  Expects `due` (ARGV index of the game id; its slot follows).
_QUEUE_FINISHED = (
    """
local ended = ARGV[#ARGV]
if ended ~= '' then
  redis.call('HSET', KEYS[1], 'e', ended)
  redis.call('ZADD', KEYS[4], 'NX', ended, ARGV[due])
  redis.call('PUBLISH', '"""
    + ARCHIVE_HINT
    + """', ARGV[due + 1] .. ' ' .. ended)
end
"""
)

# The epoch of the events a script writes (service.store.history): on a Redis server,
# 8 hex of a digest of its run_id (new at each start) and master_replid (new at each
# promotion), read as the script runs; on the embedded store, a constant.  Sets `epoch`.
_SERVER_EPOCH = """
local info = redis.call('INFO', 'server', 'replication')
local epoch = redis.sha1hex(string.match(info, 'run_id:(%x+)')
                            .. string.match(info, 'master_replid:(%x+)')):sub(1, 8)
"""
_EMBEDDED_EPOCH = (
    """
local epoch = '"""
    + "0" * 8
    + """'
"""
)


def _create(epoch: str) -> str:
    return (
        """
-- Create a game at version 1 with its first events.
-- KEYS[1] state hash, KEYS[2] event stream, KEYS[3] the due games of its slot,
-- KEYS[4] the finished games of its slot, KEYS[5] and KEYS[6] (optional) the game's
-- idempotency hash and its list of key hashes,
-- then (optional) the outbox stream
-- ARGV[1] document, ARGV[2] game TTL (s), ARGV[3] public view, ARGV[4] turn deadline
-- ("" = none), ARGV[5] write id, ARGV[6] results ("" = none), ARGV[7] the seats' parts
-- of their views ("" = none), ARGV[8] the game's digest key, ARGV[9] the digest chain's
-- head after these events, ARGV[10] the game id, ARGV[11] its hash slot,
-- ARGV[12] number of events n,
-- ARGV[13 .. 12 + 3n] seat, event, digest triples (seat "" = public);
-- with KEYS[6]: ARGV[13 + 3n] fingerprint, ARGV[14 + 3n] response, ARGV[15 + 3n] its TTL (s),
-- ARGV[16 + 3n] the key's hash; last, the webhook deliveries (see _APPEND_EVENTS), then ""
-- (a game is never finished by its creation)
-- Returns {1, last event seq, its tag} -- also when this very write made the game (a retry
-- after a lost reply); {-1} if the game exists already; {-2, fingerprint, response,
-- the id of the write's last event}
-- if it exists and was made by a request with this idempotency key.
-- Nothing is written unless the status is 1.  The creation's idempotency record is
-- not in the list of KEYS[5]: later keyed writes never push it out.
local made = redis.call('HMGET', KEYS[1], 'v', 'n', 's', 'g')
local n = tonumber(ARGV[12])
local first = 13
local due = 10
if made[1] then
  if made[2] == ARGV[5] then return {1, tonumber(made[3]), made[4]} end
  if KEYS[6] then
    local h = ARGV[16 + 3 * n]
    local old = redis.call('HMGET', KEYS[5], h .. ':f', h .. ':r', h .. ':l')
    if old[1] then return {-2, old[1], old[2], old[3]} end
  end
  return {-1}
end
redis.call('DEL', KEYS[2])
local seq = 0
local deadline = ARGV[4]
local tag = ''
"""
        + epoch
        + """"""
        + _APPEND_EVENTS
        + """
redis.call('HSET', KEYS[1], 'v', 1, 'd', ARGV[1], 's', seq, 'p', ARGV[3], 't', ARGV[4],
           'n', ARGV[5], 'q', ARGV[7], 'k', ARGV[8], 'h', ARGV[9], 'g', tag)
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'r', ARGV[6]) end
redis.call('EXPIRE', KEYS[1], ARGV[2])
if n > 0 then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
"""
        + _KEEP_DUE
        + """
if KEYS[6] then
  local at = first + 3 * n
  local h = ARGV[at + 3]
  redis.call('DEL', KEYS[5], KEYS[6])
  redis.call('HSET', KEYS[5], h .. ':f', ARGV[at], h .. ':r', ARGV[at + 1],
             h .. ':l', seq .. '.' .. tag)
  redis.call('EXPIRE', KEYS[5], ARGV[at + 2])
end
return {1, seq, tag}
"""
    )


def _commit(epoch: str) -> str:
    return (
        """
-- Save a new document if the version is still the expected one.
-- KEYS[1] state hash, KEYS[2] event stream, KEYS[3] the due games of its slot,
-- KEYS[4] the finished games of its slot, KEYS[5] and KEYS[6] (optional) the game's
-- idempotency hash and its list of key hashes
-- (oldest first), then (optional) the outbox stream
-- ARGV[1] expected version, ARGV[2] document, ARGV[3] game TTL (s),
-- ARGV[4] public view, ARGV[5] turn deadline ("" = none), ARGV[6] write id,
-- ARGV[7] results ("" = unchanged), ARGV[8] the seats' parts of their
-- views ("" = none: always written, so none is ever left from an older version),
-- ARGV[9] the digest chain's head after these events, ARGV[10] the game id,
-- ARGV[11] its hash slot, ARGV[12] number of events n,
-- ARGV[13 .. 12 + 3n] seat, event, digest triples (seat "" = public);
-- with KEYS[6]: ARGV[13 + 3n] fingerprint, ARGV[14 + 3n] response, ARGV[15 + 3n] its TTL (s),
-- ARGV[16 + 3n] the key's hash, ARGV[17 + 3n] the most records the game keeps; last,
-- the webhook deliveries (see _APPEND_EVENTS); very last, when this write finishes the
-- game, when (ms; "" = it does not: see _QUEUE_FINISHED)
-- Returns {1, new version, last seq, its tag} on success -- also when the last write of the
-- game carries this write id (the client library retried a write whose reply was
-- lost); {0, current version} on a conflict; {-1, 0} if the game does not exist;
-- {-2, 0, fingerprint, response, the id of that write's last event} if the idempotency
-- key was used already.  A record keeps the id of its write's last event (<h>:l).
-- Nothing is written unless the status is 1.
local state = redis.call('HMGET', KEYS[1], 'v', 's', 'n', 'g')
if not state[1] then return {-1, 0} end
if state[3] == ARGV[6] then return {1, tonumber(state[1]), tonumber(state[2]), state[4]} end
local n = tonumber(ARGV[12])
local first = 13
local due = 10
if KEYS[6] then
  local h = ARGV[16 + 3 * n]
  local old = redis.call('HMGET', KEYS[5], h .. ':f', h .. ':r', h .. ':l')
  if old[1] then return {-2, 0, old[1], old[2], old[3]} end
end
local version = tonumber(state[1])
if version ~= tonumber(ARGV[1]) then return {0, version} end
local seq = tonumber(state[2] or '0')
local deadline = ARGV[5]
local tag = state[4] or ''
"""
        + epoch
        + """"""
        + _APPEND_EVENTS
        + """
version = version + 1
redis.call('HSET', KEYS[1], 'v', version, 'd', ARGV[2], 's', seq, 'p', ARGV[4], 't', ARGV[5],
           'n', ARGV[6], 'q', ARGV[8], 'h', ARGV[9], 'g', tag)
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'r', ARGV[7]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
"""
        + _KEEP_DUE
        + _QUEUE_FINISHED
        + """
if KEYS[6] then
  local at = first + 3 * n
  local h = ARGV[at + 3]
  redis.call('HSET', KEYS[5], h .. ':f', ARGV[at], h .. ':r', ARGV[at + 1],
             h .. ':l', seq .. '.' .. tag)
  redis.call('RPUSH', KEYS[6], h)
  while redis.call('LLEN', KEYS[6]) > tonumber(ARGV[at + 4]) do
    local gone = redis.call('LPOP', KEYS[6])
    redis.call('HDEL', KEYS[5], gone .. ':f', gone .. ':r', gone .. ':l')
  end
  redis.call('EXPIRE', KEYS[5], ARGV[at + 2])
  redis.call('EXPIRE', KEYS[6], ARGV[at + 2])
end
return {1, version, seq, tag}
"""
    )


CREATE_SCRIPT = _create(_SERVER_EPOCH)
COMMIT_SCRIPT = _commit(_SERVER_EPOCH)
EMBEDDED_CREATE_SCRIPT = _create(_EMBEDDED_EPOCH)
""":data:`CREATE_SCRIPT` for the embedded store (no ``INFO``, no ``redis.sha1hex``)."""
EMBEDDED_COMMIT_SCRIPT = _commit(_EMBEDDED_EPOCH)
""":data:`COMMIT_SCRIPT` for the embedded store."""


# KEYS: the game's state key, its replay key.  ARGV: the replay's text.  Saves the
# replay to expire with the game's state key (nothing when the game has none: gone, or
# kept without expiry).  Returns 1 if saved, else 0.
SAVE_REPLAY_SCRIPT = """
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then
  return 0
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
return 1
"""
