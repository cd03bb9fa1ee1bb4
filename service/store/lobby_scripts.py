"""The Lua scripts of the lobby's index (:mod:`service.store.lobby`), as module
constants, each with its ``KEYS``/``ARGV`` header.  Each touches the keys of one
listing shard or of one quick-join table, which share a hash tag, so they run on
Redis Cluster too.  None touches a game: the game's own record decides its seats.
"""

# An entry of a listing shard: member "<created ms, 15 digits>:<game id>" of the
# sorted set KEYS[1] (all scores 0: ordered by the member, so by creation then id),
# and field <game id> of the hash KEYS[2]: "<ruleset>\t<seats>\t<expiry ms>".
# Both writing scripts first drop the shard's oldest expired entries (a few), so a
# shard holds about the games of its status that have not expired.
_PRUNE_OLDEST = """
local oldest = redis.call('ZRANGEBYLEX', KEYS[1], '-', '+', 'LIMIT', 0, 4)
for _, member in ipairs(oldest) do
  local id = string.sub(member, 17)
  local meta = redis.call('HGET', KEYS[2], id)
  local expiry = meta and tonumber(string.match(meta, '\\t(%d+)$'))
  if not expiry or expiry <= tonumber(ARGV[4]) then
    redis.call('ZREM', KEYS[1], member)
    if meta then redis.call('HDEL', KEYS[2], id) end
  end
end
"""

LISTING_PUT_SCRIPT = (
    """
-- Put a game in a listing shard (or refresh its entry).
-- KEYS[1] the shard's sorted set, KEYS[2] its hash of entries
-- ARGV[1] member "<created ms>:<id>", ARGV[2] game id, ARGV[3] "<ruleset>\\t<seats>\\t<expiry ms>",
-- ARGV[4] now (ms)
-- Returns 1.
"""
    + _PRUNE_OLDEST
    + """
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
"""
)

LISTING_DROP_SCRIPT = """
-- Take a game out of a listing shard.
-- KEYS[1] the shard's sorted set, KEYS[2] its hash of entries
-- ARGV[1] member "<created ms>:<id>", ARGV[2] game id
-- Returns 1 if it was there, else 0.
redis.call('HDEL', KEYS[2], ARGV[2])
return redis.call('ZREM', KEYS[1], ARGV[1])
"""

LISTING_PAGE_SCRIPT = """
-- Newest first, the entries of a listing shard below a cursor that match the filters.
-- KEYS[1] the shard's sorted set, KEYS[2] its hash of entries
-- ARGV[1] cursor: a member ("" = from the newest), ARGV[2] most matches,
-- ARGV[3] most entries to read, ARGV[4] now (ms), ARGV[5] ruleset ("" = any),
-- ARGV[6] seats ("" = any)
-- Returns {complete, last, match...}: complete is 1 when the shard was read to its
-- end; last is the last member read (every entry between the cursor and it was
-- judged); the matches are members, newest first.  Expired entries met are dropped.
local max = '+'
if ARGV[1] ~= '' then max = '(' .. ARGV[1] end
local want, budget, now = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local found, last, read = {}, '', 0
while true do
  local batch = redis.call('ZREVRANGEBYLEX', KEYS[1], max, '-', 'LIMIT', 0, 64)
  if #batch == 0 then return {1, last, unpack(found)} end
  for _, member in ipairs(batch) do
    local id = string.sub(member, 17)
    local meta = redis.call('HGET', KEYS[2], id)
    local ruleset, seats, expiry
    if meta then ruleset, seats, expiry = string.match(meta, '^(.-)\\t(%d+)\\t(%d+)$') end
    if not expiry or tonumber(expiry) <= now then
      redis.call('ZREM', KEYS[1], member)
      if meta then redis.call('HDEL', KEYS[2], id) end
    elseif (ARGV[5] == '' or ARGV[5] == ruleset) and (ARGV[6] == '' or ARGV[6] == seats) then
      found[#found + 1] = member
    end
    last, read = member, read + 1
    if #found >= want or read >= budget then return {0, last, unpack(found)} end
  end
  max = '(' .. last
end
"""

SEEK_SCRIPT = """
-- Hand out a seat of a quick-join table (a ticket): one of the open seats of its oldest
-- game; with none, list the new game ARGV[3] (not made yet: its ticket holders make it)
-- and hand out its first seat.
-- KEYS[1] the table's sorted set of games (score: created ms), KEYS[2] its hash
-- game -> seats still to hand out, KEYS[3] this request's ticket (in the same slot)
-- ARGV[1] now (ms), ARGV[2] how long a waiting game stays in the lobby (ms),
-- ARGV[3] a new game's id, ARGV[4] its seats, ARGV[5] how long the ticket is kept (ms)
-- Returns {game, created ms (text), 1 if it is the new game else 0}.  The ticket is kept, so a
-- retried call (a lost reply re-sent) is answered the same ticket, not a second one.
-- Games older than the lobby's lifetime are dropped on the way; an idle table's keys
-- expire after that lifetime.
local known = redis.call('GET', KEYS[3])
if known then
  local game, score, new = string.match(known, '^(.-)\t(%d+)\t(%d)$')
  return {game, score, tonumber(new)}
end
local now, lifetime = tonumber(ARGV[1]), tonumber(ARGV[2])
local ticket
for _ = 1, 64 do
  local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #head == 0 then break end
  local game, score = head[1], head[2]
  local left = -1
  if tonumber(score) + lifetime > now then left = redis.call('HINCRBY', KEYS[2], game, -1) end
  if left <= 0 then
    redis.call('ZREM', KEYS[1], game)
    redis.call('HDEL', KEYS[2], game)
  end
  if left >= 0 then
    ticket = {game, score, 0}
    break
  end
end
if not ticket then
  local free = tonumber(ARGV[4]) - 1
  if free > 0 then
    redis.call('ZADD', KEYS[1], now, ARGV[3])
    redis.call('HSET', KEYS[2], ARGV[3], free)
    redis.call('PEXPIRE', KEYS[1], lifetime)
    redis.call('PEXPIRE', KEYS[2], lifetime)
  end
  ticket = {ARGV[3], ARGV[1], 1}
end
redis.call('SET', KEYS[3], ticket[1] .. '\t' .. ticket[2] .. '\t' .. ticket[3], 'PX', ARGV[5])
return ticket
"""

RELEASE_SCRIPT = """
-- Give back a ticket whose seat could not be taken (the store failed meanwhile): the
-- game has one more seat to hand out.  If the seat was taken after all, the game's own
-- write refuses the next holder, who drops the game from the table.
-- KEYS[1] the table's sorted set of games, KEYS[2] its hash game -> seats to hand out
-- ARGV[1] game id, ARGV[2] its created ms, ARGV[3] how long a waiting game stays in
-- the lobby (ms)
-- Returns 1.
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
"""

TABLE_SET_SCRIPT = """
-- Say how many seats a game of a quick-join table has to offer (0: none, drop it).
-- KEYS[1] the table's sorted set of games, KEYS[2] its hash game -> seats to offer
-- ARGV[1] game id, ARGV[2] its created ms, ARGV[3] seats to offer, ARGV[4] how long
-- a waiting game stays in the lobby (ms): an idle table's keys expire after it
-- Returns 1.
if tonumber(ARGV[3]) <= 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
return 1
"""
