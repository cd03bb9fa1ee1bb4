"""Skill-based quick-join in the store: what a rated player's seek asks
(:class:`SkillAsk`, given to :meth:`service.store.lobby_index.LobbyIndex.seek`) and
its Lua script, a module constant with its ``KEYS``/``ARGV`` header.  It touches the
keys of one quick-join table, which share a hash tag, so it runs on Redis Cluster too.

A table's games' skills are kept in the table's hash ``skill``: game -> its
players' entries, ``"<player id>=<skill> <player id>=<skill>..."`` (a player id
has no space nor ``=``: :data:`service.hosting.players.PLAYER_ID_PATTERN`).  A game
without entries (none of its players is rated: an anonymous table) fits anyone.
"""

from __future__ import annotations

from dataclasses import dataclass

SKILL_SCAN = 128
"""The most games of a quick-join table's line, oldest first, one rated player's seek
looks at for a game of its skill (past them, it lists a new game)."""


@dataclass(frozen=True, slots=True)
class SkillAsk:
    """What a rated player's seek asks of a table's games: the player (its app's
    ``player_id``), its skill, and the window around it a game's players' mean
    skill must be in: ``base`` for a game just listed, ``widen`` more for each
    second the game has waited, at most ``most``."""

    player: str
    skill: float
    base: float
    widen: float
    most: float

    def args(self) -> list[str | float]:
        """The script's ``ARGV[8]`` to ``ARGV[13]``.

        >>> SkillAsk("p1", 27.5, 3.0, 0.2, 25.0).args()
        ['p1', '27.5', 3.0, 0.2, 25.0, 128]
        """
        return [self.player, repr(self.skill), self.base, self.widen, self.most, SKILL_SCAN]


def skill_entries(skills: dict[str, float]) -> str:
    """A game's players' skills as the table keeps them (player id -> skill).

    >>> skill_entries({"p1": 25.0, "p2": 30.5})
    'p1=25.0 p2=30.5'
    """
    return " ".join(f"{player}={skill!r}" for player, skill in skills.items())


# Shared by the script(s) below: the mean skill of a game's entries (nil: none).
_MEAN = """
local function mean(entries)
  if not entries then return nil end
  local sum, n = 0, 0
  for _, value in string.gmatch(entries, '(%S+)=(%S+)') do
    sum, n = sum + tonumber(value), n + 1
  end
  if n == 0 then return nil end
  return sum / n
end
"""

SKILL_SEEK_SCRIPT = (
    """
-- Hand out a seat of a quick-join table (a ticket) to a rated player: one of the open
-- seats of a game whose players' mean skill is within the game's window of the
-- player's skill, the window widening with the game's wait:
-- min(base + widen * seconds waited, most).  Scanning the line oldest first (at most
-- ARGV[13] games), among the first 8 games that fit, the oldest live one (a seated
-- player showed life since ARGV[6]), else the oldest; with none, list the new game
-- ARGV[3] (not made yet: its ticket holders make it) and hand out its first seat.
-- The player's skill joins the game's entries with its ticket.
-- KEYS[1] the table's sorted set of games (score: created ms), KEYS[2] its hash
-- game -> seats still to hand out, KEYS[3] this request's ticket (in the same slot),
-- KEYS[4] its hash game -> last sign of life of a seated player (ms), KEYS[5] its
-- hash game -> its players' skills ("<player>=<skill> ...")
-- ARGV[1] now (ms), ARGV[2] how long a waiting game stays in the lobby (ms),
-- ARGV[3] a new game's id, ARGV[4] its seats, ARGV[5] how long the ticket is kept (ms),
-- ARGV[6] live since (ms), ARGV[7] '1' if it may list the new game, else '0',
-- ARGV[8] the player's id, ARGV[9] its skill, ARGV[10] the window's base,
-- ARGV[11] its widening per second, ARGV[12] its most, ARGV[13] most games scanned
-- Returns {game, created ms (text), 1 if it is the new game else 0}; {'', '0', 0} when it
-- would have to list the new game and may not (then no ticket is kept).  The ticket is
-- kept, so a retried call (a lost reply re-sent) is answered the same ticket.
-- Games older than the lobby's lifetime are dropped on the way; an idle table's keys
-- expire after that lifetime.
local known = redis.call('GET', KEYS[3])
if known then
  local game, score, new = string.match(known, '^(.-)\\t(%d+)\\t(%d)$')
  return {game, score, tonumber(new)}
end
local now, lifetime, since = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[6])
local skill, base, widen = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local most, budget = tonumber(ARGV[12]), tonumber(ARGV[13])
local entry = ARGV[8] .. '=' .. ARGV[9]
"""
    + _MEAN
    + """
local function drop(game)
  redis.call('ZREM', KEYS[1], game)
  redis.call('HDEL', KEYS[2], game)
  redis.call('HDEL', KEYS[4], game)
  redis.call('HDEL', KEYS[5], game)
end
local function fits(game, score)
  local skilled = mean(redis.call('HGET', KEYS[5], game))
  if not skilled then return true end
  local window = math.min(base + widen * math.max(0, now - tonumber(score)) / 1000, most)
  return math.abs(skilled - skill) <= window
end
local function pick()
  local game, score, fitting, offset, scanned = nil, nil, 0, 0, 0
  while scanned < budget do
    local line = redis.call('ZRANGE', KEYS[1], offset, offset + 31, 'WITHSCORES')
    if #line == 0 then break end
    for i = 1, #line, 2 do
      scanned = scanned + 1
      if tonumber(line[i + 1]) + lifetime <= now then
        drop(line[i])
      else
        offset = offset + 1
        if fits(line[i], line[i + 1]) then
          fitting = fitting + 1
          if not game then game, score = line[i], line[i + 1] end
          if tonumber(redis.call('HGET', KEYS[4], line[i]) or 0) >= since then
            return line[i], line[i + 1]
          end
          if fitting >= 8 then return game, score end
        end
      end
      if scanned >= budget then break end
    end
  end
  return game, score
end
local ticket
for _ = 1, 64 do
  local game, score = pick()
  if not game then break end
  local left = redis.call('HINCRBY', KEYS[2], game, -1)
  if left <= 0 then
    drop(game)
  else
    local entries = redis.call('HGET', KEYS[5], game)
    redis.call('HSET', KEYS[5], game, entries and (entries .. ' ' .. entry) or entry)
    redis.call('PEXPIRE', KEYS[5], lifetime)
  end
  if left >= 0 then
    ticket = {game, score, 0}
    break
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
    redis.call('HSET', KEYS[5], ARGV[3], entry)
    redis.call('PEXPIRE', KEYS[1], lifetime)
    redis.call('PEXPIRE', KEYS[2], lifetime)
    redis.call('PEXPIRE', KEYS[5], lifetime)
  end
  ticket = {ARGV[3], ARGV[1], 1}
end
redis.call('SET', KEYS[3], ticket[1] .. '\\t' .. ticket[2] .. '\\t' .. ticket[3], 'PX', ARGV[5])
return ticket
"""
)
