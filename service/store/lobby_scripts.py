"""The Lua scripts of the lobby's index (:mod:`service.store.lobby_index`), as module
constants, each with its ``KEYS``/``ARGV`` header.  Each touches the keys of one
listing shard or of one quick-join table, which share a hash tag, so they run on
Redis Cluster too.  None touches a game: the game's own record decides its seats.
"""

# An entry of a listing shard: member "<created ms, 15 digits>:<game id>" of the
# sorted set KEYS[1] (all scores 0: ordered by the member, so by creation then id),
# field <game id> of the hash KEYS[2]: "<ruleset>\t<seats>\t<expiry ms>\t<created
# ms, 15 digits>" (entries written before the last field was added lack it), and,
# once a seated player showed life, the same member in the sorted set KEYS[3],
# scored by when (ms).  Both writing scripts first drop the shard's oldest expired
# entries (a few), so a shard holds about the games of its status that have not
# expired.
_PRUNE_OLDEST = """
local oldest = redis.call('ZRANGEBYLEX', KEYS[1], '-', '+', 'LIMIT', 0, 4)
for _, member in ipairs(oldest) do
  local id = string.sub(member, 17)
  local meta = redis.call('HGET', KEYS[2], id)
  local expiry = meta and tonumber(string.match(meta, '^.-\\t%d+\\t(%d+)'))
  if not expiry or expiry <= tonumber(ARGV[4]) then
    redis.call('ZREM', KEYS[1], member)
    redis.call('ZREM', KEYS[3], member)
    if meta then redis.call('HDEL', KEYS[2], id) end
  end
end
"""

LISTING_PUT_SCRIPT = (
    """
-- Put a game in a listing shard (or refresh its entry).
-- KEYS[1] the shard's sorted set, KEYS[2] its hash of entries, KEYS[3] its signs of life
-- ARGV[1] member "<created ms>:<id>", ARGV[2] game id,
-- ARGV[3] "<ruleset>\\t<seats>\\t<expiry ms>\\t<created ms>", ARGV[4] now (ms)
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
-- KEYS[1] the shard's sorted set, KEYS[2] its hash of entries, KEYS[3] its signs of life
-- ARGV[1] member "<created ms>:<id>", ARGV[2] game id
-- Returns 1 if it was there, else 0.
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
"""

LISTING_PAGE_SCRIPT = """
-- Newest first, the entries of a listing shard below a cursor that match the filters.
-- KEYS[1] the shard's sorted set, KEYS[2] its hash of entries, KEYS[3] its signs of life
-- ARGV[1] cursor: a member ("" = from the newest), ARGV[2] most matches,
-- ARGV[3] most entries to read, ARGV[4] now (ms), ARGV[5] ruleset ("" = any),
-- ARGV[6] seats ("" = any), ARGV[7] only entries with no sign of life since this
-- time (ms; "" = any entry)
-- Returns {complete, last, match...}: complete is 1 when the shard was read to its
-- end; last is the last member read (every entry between the cursor and it was
-- judged); the matches are members, newest first.  Expired entries met are dropped.
local max = '+'
if ARGV[1] ~= '' then max = '(' .. ARGV[1] end
local want, budget, now = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local idle = tonumber(ARGV[7])
local found, last, read = {}, '', 0
while true do
  local batch = redis.call('ZREVRANGEBYLEX', KEYS[1], max, '-', 'LIMIT', 0, 64)
  if #batch == 0 then return {1, last, unpack(found)} end
  for _, member in ipairs(batch) do
    local id = string.sub(member, 17)
    local meta = redis.call('HGET', KEYS[2], id)
    local ruleset, seats, expiry
    if meta then ruleset, seats, expiry = string.match(meta, '^(.-)\\t(%d+)\\t(%d+)') end
    if not expiry or tonumber(expiry) <= now then
      redis.call('ZREM', KEYS[1], member)
      redis.call('ZREM', KEYS[3], member)
      if meta then redis.call('HDEL', KEYS[2], id) end
    elseif (ARGV[5] == '' or ARGV[5] == ruleset) and (ARGV[6] == '' or ARGV[6] == seats)
      and (not idle or tonumber(redis.call('ZSCORE', KEYS[3], member) or 0) < idle) then
      found[#found + 1] = member
    end
    last, read = member, read + 1
    if #found >= want or read >= budget then return {0, last, unpack(found)} end
  end
  max = '(' .. last
end
"""

LISTING_LIVE_SCRIPT = """
-- Newest first, the entries of a listing shard below a cursor that match the filters
-- and whose seated players showed life since a time: the live tables.
-- KEYS[1] the shard's sorted set, KEYS[2] its hash of entries, KEYS[3] its signs of life
-- ARGV[1] cursor: a member ("" = from the newest), ARGV[2] most matches, ARGV[3] now
-- (ms), ARGV[4] ruleset ("" = any), ARGV[5] seats ("" = any), ARGV[6] since (ms)
-- Returns the matches (members), newest first.  Reads every entry with a sign of life
-- since ARGV[6] (the shard's live tables, no others); changes nothing.
local now = tonumber(ARGV[3])
local found = {}
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], ARGV[6], '+inf')) do
  if ARGV[1] == '' or member < ARGV[1] then
    local meta = redis.call('HGET', KEYS[2], string.sub(member, 17))
    local ruleset, seats, expiry
    if meta then ruleset, seats, expiry = string.match(meta, '^(.-)\\t(%d+)\\t(%d+)') end
    if expiry and tonumber(expiry) > now and (ARGV[4] == '' or ARGV[4] == ruleset)
      and (ARGV[5] == '' or ARGV[5] == seats) then
      found[#found + 1] = member
    end
  end
end
table.sort(found, function(a, b) return a > b end)
return {unpack(found, 1, math.min(#found, tonumber(ARGV[2])))}
"""

LISTING_SEEN_SCRIPT = """
-- Note a sign of life of a listed game's seated player (if the game is in the shard).
-- KEYS[1] the shard's sorted set, KEYS[2] its hash of entries, KEYS[3] its signs of life
-- ARGV[1] game id, ARGV[2] when (ms)
-- Returns 1 if the game is listed in the shard, else 0.  A later sign never goes back.
local meta = redis.call('HGET', KEYS[2], ARGV[1])
local created = meta and string.match(meta, '^.-\\t%d+\\t%d+\\t(%d+)$')
if not created then return 0 end
local member = created .. ':' .. ARGV[1]
if not redis.call('ZSCORE', KEYS[1], member) then return 0 end
local was = tonumber(redis.call('ZSCORE', KEYS[3], member) or 0)
if was < tonumber(ARGV[2]) then redis.call('ZADD', KEYS[3], ARGV[2], member) end
return 1
"""

SEEK_SCRIPT = """
-- Hand out a seat of a quick-join table (a ticket): one of the open seats of its oldest
-- live game among the first few in line (a seated player showed life since ARGV[6]),
-- else of its oldest game; with none, list the new game ARGV[3] (not made yet: its
-- ticket holders make it) and hand out its first seat.
-- KEYS[1] the table's sorted set of games (score: created ms), KEYS[2] its hash
-- game -> seats still to hand out, KEYS[3] this request's ticket (in the same slot),
-- KEYS[4] its hash game -> last sign of life of a seated player (ms), KEYS[5] its hash
-- game -> its players' skills (cleared for a game dropped)
-- ARGV[1] now (ms), ARGV[2] how long a waiting game stays in the lobby (ms),
-- ARGV[3] a new game's id, ARGV[4] its seats, ARGV[5] how long the ticket is kept (ms),
-- ARGV[6] live since (ms), ARGV[7] '1' if it may list the new game, else '0'
-- Returns {game, created ms (text), 1 if it is the new game else 0}; {'', '0', 0} when it
-- would have to list the new game and may not (then no ticket is kept).  The ticket is kept, so a
-- retried call (a lost reply re-sent) is answered the same ticket, not a second one.
-- Games older than the lobby's lifetime are dropped on the way; an idle table's keys
-- expire after that lifetime.
local known = redis.call('GET', KEYS[3])
if known then
  local game, score, new = string.match(known, '^(.-)\t(%d+)\t(%d)$')
  return {game, score, tonumber(new)}
end
local now, lifetime, since = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[6])
local function drop(game)
  redis.call('ZREM', KEYS[1], game)
  redis.call('HDEL', KEYS[2], game)
  redis.call('HDEL', KEYS[4], game)
  redis.call('HDEL', KEYS[5], game)
end
local ticket
for _ = 1, 64 do
  local line = redis.call('ZRANGE', KEYS[1], 0, 7, 'WITHSCORES')
  if #line == 0 then break end
  local game, score
  for i = 1, #line, 2 do
    if tonumber(line[i + 1]) + lifetime <= now then
      drop(line[i])
    else
      if not game then game, score = line[i], line[i + 1] end
      if tonumber(redis.call('HGET', KEYS[4], line[i]) or 0) >= since then
        game, score = line[i], line[i + 1]
        break
      end
    end
  end
  if game then
    local left = redis.call('HINCRBY', KEYS[2], game, -1)
    if left <= 0 then drop(game) end
    if left >= 0 then
      ticket = {game, score, 0}
      break
    end
  end
end
if not ticket and ARGV[7] ~= '1' then
  return {'', '0', 0}
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
-- game has one more seat to hand out, and the ticket's player's skill (skill-based
-- quick-join) leaves the game's entries.  If the seat was taken after all, the game's
-- own write refuses the next holder, who drops the game from the table.
-- KEYS[1] the table's sorted set of games, KEYS[2] its hash game -> seats to hand out,
-- KEYS[3] its hash game -> its players' skills ("<player>=<skill> ...")
-- ARGV[1] game id, ARGV[2] its created ms, ARGV[3] how long a waiting game stays in
-- the lobby (ms), ARGV[4] the ticket's player ('': none)
-- Returns 1.
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], 1)
end
local entries = ARGV[4] ~= '' and redis.call('HGET', KEYS[3], ARGV[1])
if entries then
  local kept = {}
  for player, skill in string.gmatch(entries, '(%S+)=(%S+)') do
    if player ~= ARGV[4] then kept[#kept + 1] = player .. '=' .. skill end
  end
  if #kept == 0 then
    redis.call('HDEL', KEYS[3], ARGV[1])
  else
    redis.call('HSET', KEYS[3], ARGV[1], table.concat(kept, ' '))
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
"""

TABLE_SET_SCRIPT = """
-- Say how many seats a game of a quick-join table has to offer (0: none, drop it), and
-- its seated players' skills (skill-based quick-join).
-- KEYS[1] the table's sorted set of games, KEYS[2] its hash game -> seats to offer,
-- KEYS[3] its hash game -> last sign of life, KEYS[4] its hash game -> its players'
-- skills
-- ARGV[1] game id, ARGV[2] its created ms, ARGV[3] seats to offer, ARGV[4] how long
-- a waiting game stays in the lobby (ms): an idle table's keys expire after it,
-- ARGV[5] its players' skills, "<player>=<skill> ..." ('': none rated)
-- Returns 1.
if tonumber(ARGV[3]) <= 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
  redis.call('HDEL', KEYS[4], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  if ARGV[5] == '' then
    redis.call('HDEL', KEYS[4], ARGV[1])
  else
    redis.call('HSET', KEYS[4], ARGV[1], ARGV[5])
    redis.call('PEXPIRE', KEYS[4], ARGV[4])
  end
end
return 1
"""

TABLE_SEEN_SCRIPT = """
-- Note a sign of life of a seated player of a game a quick-join table offers.
-- KEYS[1] the table's sorted set of games, KEYS[2] its hash game -> last sign of life
-- ARGV[1] game id, ARGV[2] when (ms), ARGV[3] how long a waiting game stays in the
-- lobby (ms)
-- Returns 1 if the table offers the game, else 0.  A later sign never goes back.
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or 0) < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
"""
