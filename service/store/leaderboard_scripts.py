"""The leaderboards' Lua scripts (:mod:`service.store.leaderboards`): a post on a
player's shard, and each shard's part of a read -- a player's place (a window around
a point) or a page of a walk (entries after a point, unchanged since the walk began).

The reads share :data:`PLACE`, which places a point ``(score, player id)`` in a
shard's order: the entries of lower scores by ``ZCOUNT``, the tied ones by a binary
search over ranks, comparing members bytewise (Lua's ``<`` on strings follows the
server's locale, Redis's order of members does not).
"""

from __future__ import annotations

POST_SCRIPT = """
-- Put a player on its shard of a leaderboard at a rating, or take it off.  A post
-- with fewer games than the shard holds for the player is stale and changes nothing.
-- KEYS[1] the shard's ratings (sorted set), KEYS[2] its entries (hash)
-- ARGV[1] the player id, ARGV[2] its score (minus its rating; "": take it off),
-- ARGV[3] its rated games, ARGV[4] now (ms)
-- Returns 1 when the player is on the shard as posted, 0 when taken off, -1 when stale.
local had = redis.call('HGET', KEYS[2], ARGV[1])
if had and tonumber(string.match(had, '^%d+')) > tonumber(ARGV[3]) then return -1 end
if ARGV[2] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 0
end
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if had and score and tonumber(score) == tonumber(ARGV[2])
    and tonumber(string.match(had, '^%d+')) == tonumber(ARGV[3]) then
  return 1  -- the same post again: its time of change stays
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. ':' .. ARGV[4])
return 1
"""

PLACE = """
local function lower(a, b)  -- bytewise, not Lua's locale-dependent comparison
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local size = redis.call('ZCARD', KEYS[1])
local at = 0
if ARGV[1] ~= '' then
  local lo = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. ARGV[1])
  local hi = lo + redis.call('ZCOUNT', KEYS[1], ARGV[1], ARGV[1])
  local inclusive = ARGV[3] == '1'
  while lo < hi do  -- the first tie after the point's player id (or at it)
    local mid = math.floor((lo + hi) / 2)
    local member = redis.call('ZRANGE', KEYS[1], mid, mid)[1]
    if lower(member, ARGV[2]) or (inclusive and member == ARGV[2]) then
      lo = mid + 1
    else
      hi = mid
    end
  end
  at = lo
end
"""
"""A fragment of the read scripts, not a script: from ``KEYS[1]`` (the shard's ratings),
``ARGV[1]`` (the point's score, "": before every entry), ``ARGV[2]`` (its player id) and
``ARGV[3]`` ("1": an entry equal to the point is before it), it sets ``size`` (the
shard's entries) and ``at`` (how many are before the point)."""

WINDOW_SCRIPT = (
    """
-- One shard's part of a player's place: where a point falls in the shard's order
-- (score ascending, then member bytewise, as Redis orders them), and the entries
-- around it.
-- KEYS[1] the shard's ratings (sorted set), KEYS[2] its entries (hash)
-- ARGV[1] the point's score ("": before every entry), ARGV[2] its player id,
-- ARGV[3] "1": an entry equal to the point is before it, "0": it is not,
-- ARGV[4] entries to give before the point, ARGV[5] entries to give from it on
-- Returns {size, before, first, member, score, entry, ...}: the shard's size, how
-- many of its entries are before the point, the rank of the first entry given, and
-- the entries from rank first to before + ARGV[5] - 1 (entry: "<games>:<ms>").
"""
    + PLACE
    + """
local first = math.max(0, at - tonumber(ARGV[4]))
local last = at + tonumber(ARGV[5]) - 1
local out = {size, at, first}
if last < first then return out end
local rows = redis.call('ZRANGE', KEYS[1], first, last, 'WITHSCORES')
if #rows == 0 then return out end
local members = {}
for i = 1, #rows, 2 do members[#members + 1] = rows[i] end
local entries = redis.call('HMGET', KEYS[2], unpack(members))
for i = 1, #members do
  out[#out + 1] = members[i]
  out[#out + 1] = rows[2 * i]
  out[#out + 1] = entries[i] or '0:0'
end
return out
"""
)

PAGE_SCRIPT = (
    """
-- One shard's part of a page of a walk begun at a time: the entries after a cursor
-- (in the shard's order, as WINDOW_SCRIPT's), up to a number of them changed before
-- the walk began, reading at most a number of entries.
-- KEYS[1] the shard's ratings (sorted set), KEYS[2] its entries (hash)
-- ARGV[1] the cursor's score ("": from the first entry), ARGV[2] its player id,
-- ARGV[3] "1", ARGV[4] the entries wanted, ARGV[5] the most entries to read,
-- ARGV[6] when the walk began (ms): an entry changed later is read, not wanted
-- Returns {size, before, complete, member, score, entry, ...}: the shard's size, how
-- many of its entries are at or before the cursor, 1 if every entry after the
-- cursor was read (else 0), and the entries read, in order (entry: "<games>:<ms>").
"""
    + PLACE
    + """
local wanted, most, since = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local out = {size, at, 0}
local kept, read, from = 0, 0, at
while kept < wanted and read < most and from < size do
  local chunk = math.min(most - read, wanted - kept + 2)
  local rows = redis.call('ZRANGE', KEYS[1], from, from + chunk - 1, 'WITHSCORES')
  if #rows == 0 then break end
  local members = {}
  for i = 1, #rows, 2 do members[#members + 1] = rows[i] end
  local entries = redis.call('HMGET', KEYS[2], unpack(members))
  for i = 1, #members do
    local entry = entries[i] or '0:0'
    out[#out + 1] = members[i]
    out[#out + 1] = rows[2 * i]
    out[#out + 1] = entry
    read = read + 1
    if tonumber(string.match(entry, ':(%d+)$')) <= since then
      kept = kept + 1
      if kept == wanted then break end
    end
  end
  from = at + read
end
if at + read >= size then out[3] = 1 end
return out
"""
)
