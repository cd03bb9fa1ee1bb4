"""Players' ratings in Redis (the rules are :mod:`service.hosting.ratings`'s; here
only the calls).

Layout, in the player's own slot (the hash tag of its other keys, ``<tag>`` a hash
of the app's and the player's ids: :func:`~service.store.keys.player_key`):

* ``t13:player:{<tag>}:ratings`` hash -- three fields per ruleset and table size
  (``<pool>`` is ``<ruleset>:<table size>``, e.g. ``classic:2``):
  ``<pool>:mu`` and ``<pool>:sigma`` (decimal text, 17 significant digits) and
  ``<pool>:games`` (integer).  A pool without fields is a player's first: the
  default rating, no games.  It never expires.
* ``t13:player:{<tag>}:rated`` sorted set -- the games whose change was applied
  (member the game id, score when it was applied, ms), the latest
  :data:`RATED_KEPT`: the record that makes :data:`APPLY_SCRIPT` apply a game's
  change once.

Each change is applied by one script touching only these two keys, so it is atomic
in the player's slot on a Redis Cluster too; with ``REDIS_WAIT_REPLICAS`` or
``REDIS_WAIT_AOF`` it is sent with the confirmation of
:mod:`service.store.durability` (a barrier in the player's slot, then ``WAIT``
/ ``WAITAOF``), and :meth:`PlayerRatings.apply` returns only once it is confirmed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.store import keys
from service.store.durability import Durability, send_durably
from service.store.failures import translate_errors
from service.store.redis_client import RedisClient

RATED_KEPT = 1000
"""Games whose application a player's record keeps (the oldest dropped past it).  A
game's change is retried within a claim's lease or two, never after a thousand later
games of the same player."""

APPLY_SCRIPT = """
-- Apply one game's change to a player's rating in one pool, unless that game's was
-- applied already; record the game.
-- KEYS[1] the player's ratings (hash), KEYS[2] its rated games (sorted set)
-- ARGV[1] the game id, ARGV[2] the pool (<ruleset>:<size>), ARGV[3] mu's change,
-- ARGV[4] sigma before, ARGV[5] sigma after (as computed), ARGV[6] the default mu,
-- ARGV[7] the default sigma, ARGV[8] now (ms), ARGV[9] the games to keep recorded
-- Returns {1 applied / 0 applied before, mu, sigma, games} (mu and sigma as text).
local pool = ARGV[2]
local function now_rating()
  local got = redis.call('HMGET', KEYS[1], pool .. ':mu', pool .. ':sigma', pool .. ':games')
  return got[1] or ARGV[6], got[2] or ARGV[7], tonumber(got[3] or '0')
end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  local mu, sigma, games = now_rating()
  return {0, mu, sigma, games}
end
local mu, sigma, games = now_rating()
local before, after = tonumber(ARGV[4]), tonumber(ARGV[5])
local new_sigma = tonumber(sigma)
if math.abs(new_sigma - before) <= 1e-12 * before then
  new_sigma = after
else
  new_sigma = new_sigma * after / before
end
local new_mu = string.format('%.17g', tonumber(mu) + tonumber(ARGV[3]))
new_sigma = string.format('%.17g', new_sigma)
redis.call('HSET', KEYS[1], pool .. ':mu', new_mu, pool .. ':sigma', new_sigma)
games = redis.call('HINCRBY', KEYS[1], pool .. ':games', 1)
redis.call('ZADD', KEYS[2], ARGV[8], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[9]) - 1)
return {1, new_mu, new_sigma, games}
"""


def pool_name(ruleset: str, table_size: int) -> str:
    """The name of a ruleset's and table size's pool of ratings (a prefix of fields).

    >>> pool_name("classic", 4)
    'classic:4'
    """
    return f"{ruleset}:{table_size}"


@dataclass(frozen=True, slots=True)
class StoredRating:
    """A pool's fields as stored: None where the player has none yet."""

    mu: float | None
    sigma: float | None
    games: int


@dataclass(frozen=True, slots=True)
class Applied:
    """What :meth:`PlayerRatings.apply` did: whether it applied the change (False:
    the game's was applied before, nothing changed) and the rating now."""

    applied: bool
    mu: float
    sigma: float
    games: int


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _stored(mu: Any, sigma: Any, games: Any) -> StoredRating:
    return StoredRating(
        None if mu is None else float(mu),
        None if sigma is None else float(sigma),
        0 if games is None else int(games),
    )


class PlayerRatings:
    """The Redis calls of players' ratings (thread-safe)."""

    def __init__(self, client: Callable[[], RedisClient], durability: Durability) -> None:
        """``client``: a function returning the store's client (connected lazily);
        ``durability``: what an applied change must reach before :meth:`apply` returns."""
        self._client = client
        self._durability = durability
        self._script: Any = None

    def read(self, tag: str, pool: str) -> StoredRating:
        """The player's rating in ``pool`` (:func:`pool_name`), one read."""
        with translate_errors():
            mu, sigma, games = self._client().hmget(
                keys.player_key(tag, "ratings"), [f"{pool}:mu", f"{pool}:sigma", f"{pool}:games"]
            )
        return _stored(mu, sigma, games)

    def read_all(self, tag: str) -> dict[str, StoredRating]:
        """Every pool the player has a rating in: pool -> rating, one read."""
        with translate_errors():
            raw = self._client().hgetall(keys.player_key(tag, "ratings"))
        fields = {_text(name): _text(value) for name, value in raw.items()}
        pools = sorted({name.rsplit(":", 1)[0] for name in fields})
        return {
            pool: _stored(
                fields.get(f"{pool}:mu"), fields.get(f"{pool}:sigma"), fields.get(f"{pool}:games")
            )
            for pool in pools
        }

    def apply(
        self,
        tag: str,
        game_id: str,
        pool: str,
        *,
        mu_change: float,
        sigma_before: float,
        sigma_after: float,
        default: tuple[float, float],
    ) -> Applied:
        """Apply ``game_id``'s change to the player's rating in ``pool`` unless it
        was applied before (see :data:`APPLY_SCRIPT`): mu moves by ``mu_change``;
        sigma becomes ``sigma_after``, or if another game changed it meanwhile is
        scaled by ``sigma_after / sigma_before``; ``default`` (mu, sigma) is the
        rating of a first game.  With durability on, returns once the change (or,
        applied before, the earlier one) is confirmed:
        :class:`~service.store.store_errors.NotDurable` when it is not."""
        client = self._client()
        if self._script is None:
            self._script = client.register_script(APPLY_SCRIPT)
        key_list = [keys.player_key(tag, "ratings"), keys.player_key(tag, "rated")]
        args = [
            game_id,
            pool,
            repr(mu_change),
            repr(sigma_before),
            repr(sigma_after),
            repr(default[0]),
            repr(default[1]),
            int(time.time() * 1000),
            RATED_KEPT,
        ]
        with translate_errors():
            if not self._durability.on:
                reply = self._script(keys=key_list, args=args)
            else:  # the barrier is in the player's slot: ``tag`` stands for its game id
                command = ("EVALSHA", self._script.sha, len(key_list), *key_list, *args)
                reply, confirmation = send_durably(
                    client, self._durability, tag, command, self._script
                )
                self._durability.check(confirmation)
        done, mu, sigma, games = reply
        return Applied(bool(int(done)), float(_text(mu)), float(_text(sigma)), int(games))
