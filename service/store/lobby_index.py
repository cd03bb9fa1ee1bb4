"""The lobby's index in Redis: where listed games are found, never what decides
their seats (the game's own record does, in the game's slot).

Two structures, each split over many hash slots so that no key is hot on a
Redis Cluster:

* **Listings** (``GET /v1/games``): per status (waiting, playing, finished),
  :data:`~service.store.keys.LOBBY_SHARDS` shards, a game in shard
  :func:`~service.store.keys.lobby_shard` of its id.  A shard is a sorted set of
  ``<created ms>:<id>`` (ordered by creation, then id: a total order, so a page's
  cursor is the last member it read and concurrent inserts, always newer, never
  shift a later page), a hash of each entry's ruleset, seats, expiry and
  creation, and a sorted set of the entries whose seated players showed life,
  scored by when (:meth:`LobbyIndex.seen`; only waiting games get any).  A page
  reads every shard of the status (each at most a bounded number of entries, or
  its live entries: :meth:`LobbyIndex.live_page`) and merges them.  Writes drop
  a few expired entries, so a shard holds about the live games of its status.
* **Quick-join tables**: per table (ruleset, options, seats, timers: see
  :func:`service.hosting.lobby_operations.table_of`), a sorted set of its waiting games with
  seats to offer, oldest first, how many seats each has to offer, and when a
  seated player of each last showed life.  One script hands out a seat (a
  ticket) of the oldest live game among the first few in line, else of the
  oldest, or lists a new game (made by its ticket holders) when there is none
  (:meth:`LobbyIndex.seek`): tables of different rulesets, options or sizes
  live in different slots; a table's script does O(1) work.  A rated player's
  seek (:class:`SkillAsk`) is handed a seat only of a game whose players' mean
  skill is within a window of its own that widens with the game's wait; the
  table keeps each game's players' skills for that
  (:mod:`service.store.skill_seek`), and scans at most
  :data:`~service.store.skill_seek.SKILL_SCAN` games of its line.

Every entry is a hint: a reader checks the game itself, and a ticket is a seat
taken through the game's own write, which refuses a seat already taken.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.store import keys
from service.store.failures import translate_errors
from service.store.lobby_scripts import (
    LISTING_DROP_SCRIPT,
    LISTING_LIVE_SCRIPT,
    LISTING_PAGE_SCRIPT,
    LISTING_PUT_SCRIPT,
    LISTING_SEEN_SCRIPT,
    RELEASE_SCRIPT,
    SEEK_SCRIPT,
    TABLE_SEEN_SCRIPT,
    TABLE_SET_SCRIPT,
)
from service.store.redis_client import RedisClient
from service.store.skill_seek import SKILL_SEEK_SCRIPT, SkillAsk, skill_entries

LISTED_STATUSES = ("waiting", "playing", "finished", "aborted")
"""The statuses the lobby lists (a cancelled game leaves it)."""

TICKET_SECONDS = 60
"""How long a ticket is kept under the name of an unkeyed seek, for the client
library's retry of the call."""

SCAN_PER_SHARD = 200
"""The most entries one page reads from one shard (filters that match rarely give a
short page, with a cursor to read on)."""


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def member_of(game_id: str, created_at: float) -> str:
    """A game's member in its listing shard: its creation (ms) then its id.

    >>> member_of("g1", 1.5)
    '000000000001500:g1'
    """
    return f"{_ms(created_at):015d}:{game_id}"


def game_of_member(member: str) -> str:
    """The game id of a listing member.

    >>> game_of_member("000000000001500:g1")
    'g1'
    """
    return member[16:]


@dataclass(frozen=True, slots=True)
class Ticket:
    """A seat of a quick-join table to take, through the game's own write: the
    game, its creation time (its place in the table), and whether the table
    listed it for this ticket (then nobody may have made it yet)."""

    game: str
    created_at: float
    new: bool


@dataclass(frozen=True, slots=True)
class Page:
    """A page of a listing: its members (newest first) and the cursor of the next
    page (None at the end)."""

    members: list[str]
    next: str | None


class LobbyIndex:
    """The lobby's Redis calls (thread-safe; one per :class:`GameStore`)."""

    def __init__(self, client: Callable[[], RedisClient]) -> None:
        self._client = client
        self._scripts: dict[str, Any] = {}

    def _run(self, script: str, key_list: list[str], args: list[Any]) -> Any:
        found = self._scripts.get(script)
        client = self._client()
        if found is None:
            found = self._scripts[script] = client.register_script(script)
        with translate_errors():
            return found(keys=key_list, args=args)

    # -- listings -------------------------------------------------------------------

    @staticmethod
    def _shard_keys(status: str, game_id: str) -> list[str]:
        return _keys_of_shard(status, keys.lobby_shard(game_id))

    def put(
        self,
        status: str,
        game_id: str,
        created_at: float,
        ruleset: str,
        seats: int,
        expires_at: float,
    ) -> None:
        """List ``game_id`` under ``status`` until ``expires_at`` (Unix time)."""
        meta = f"{ruleset}\t{seats}\t{_ms(expires_at)}\t{_ms(created_at):015d}"
        self._run(
            LISTING_PUT_SCRIPT,
            self._shard_keys(status, game_id),
            [member_of(game_id, created_at), game_id, meta, _ms(time.time())],
        )

    def drop(self, status: str, game_id: str, created_at: float) -> None:
        """Take ``game_id`` out of the listing of ``status``."""
        self._run(
            LISTING_DROP_SCRIPT,
            self._shard_keys(status, game_id),
            [member_of(game_id, created_at), game_id],
        )

    def page(
        self,
        status: str,
        cursor: str | None,
        limit: int,
        ruleset: str | None = None,
        seats: int | None = None,
        idle_since: float | None = None,
    ) -> Page:
        """The members of the next page of the ``status`` listing below ``cursor``
        (None: from the newest), matching the filters; with ``idle_since`` (Unix
        time), only entries whose seated players showed no life since then.

        Every shard reads at most :data:`SCAN_PER_SHARD` entries.  The page ends
        where every shard is known to be complete: the highest entry one of them
        stopped at, or the ``limit``-th match, whichever is higher; so no entry
        between two cursors is ever left out, and none is given twice."""
        now = _ms(time.time())
        idle = "" if idle_since is None else _ms(idle_since)
        answers = [
            self._run(
                LISTING_PAGE_SCRIPT,
                _keys_of_shard(status, shard),
                [cursor or "", limit, SCAN_PER_SHARD, now, ruleset or "", seats or "", idle],
            )
            for shard in range(keys.LOBBY_SHARDS)
        ]
        floor = ""  # every shard was read completely down to here (this one included)
        found: list[str] = []
        for complete, last, *matches in answers:
            if not int(complete):
                floor = max(floor, _text(last))
            found += [_text(m) for m in matches]
        found = sorted((m for m in found if m >= floor), reverse=True)
        if len(found) >= limit:
            return Page(found[:limit], found[limit - 1])
        return Page(found, floor or None)

    def live_page(
        self,
        status: str,
        cursor: str | None,
        limit: int,
        since: float,
        ruleset: str | None = None,
        seats: int | None = None,
    ) -> Page:
        """The members of the next page of the ``status`` listing's entries below
        ``cursor`` (None: from the newest) whose seated players showed life since
        ``since`` (Unix time), matching the filters, newest first.  Each shard
        reads its entries with such a sign of life, and no other: the live tables
        are few next to the listed ones (a sign of life costs a request with a
        seat's token)."""
        now = _ms(time.time())
        found: list[str] = []
        for shard in range(keys.LOBBY_SHARDS):
            matches = self._run(
                LISTING_LIVE_SCRIPT,
                _keys_of_shard(status, shard),
                [cursor or "", limit, now, ruleset or "", seats or "", _ms(since)],
            )
            found += [_text(m) for m in matches]
        found.sort(reverse=True)
        if len(found) >= limit:
            return Page(found[:limit], found[limit - 1])
        return Page(found, None)

    def seen(self, game_id: str, table: str, at: float, lifetime: float) -> bool:
        """Note that a seated player of the waiting game ``game_id`` (of quick-join
        table ``table``) showed life at ``at`` (Unix time): the lobby lists it among
        the live tables, and quick-join offers it first, for a while.  False when
        the game is not in the waiting listing (any more)."""
        listed = self._run(
            LISTING_SEEN_SCRIPT, self._shard_keys("waiting", game_id), [game_id, _ms(at)]
        )
        if not int(listed):
            return False
        self._run(
            TABLE_SEEN_SCRIPT,
            [keys.table_key(table, "open"), keys.table_key(table, "seen")],
            [game_id, _ms(at), _ms(lifetime)],
        )
        return True

    def views(self, game_ids: list[str]) -> list[tuple[int, bytes] | None]:
        """``(version, public view)`` of each game as its last write saved it (None
        for a game that is gone), in one pipelined round trip per node."""
        if not game_ids:
            return []
        with translate_errors():
            pipe = self._client().pipeline(transaction=False)
            for game_id in game_ids:
                pipe.hmget(keys.key(game_id, keys.STATE), "v", "p")
            replies = pipe.execute()
        return [None if v is None else (int(v), p or b"") for v, p in replies]

    def states(self, game_ids: list[str]) -> list[tuple[bytes, bytes] | None]:
        """``(public view, document)`` of each game as its last write saved it (None
        for a game that is gone), in one pipelined round trip per node."""
        if not game_ids:
            return []
        with translate_errors():
            pipe = self._client().pipeline(transaction=False)
            for game_id in game_ids:
                pipe.hmget(keys.key(game_id, keys.STATE), "p", "d")
            replies = pipe.execute()
        return [None if p is None or d is None else (p, d) for p, d in replies]

    # -- quick-join tables ----------------------------------------------------------

    def seek(
        self,
        table: str,
        lifetime: float,
        new_game: str,
        seats: int,
        name: str,
        keep: float,
        live_since: float = 0.0,
        may_list: bool = True,
        skill: SkillAsk | None = None,
    ) -> Ticket | None:
        """A seat of ``table`` to take: one of the open seats of its oldest game
        whose seated players showed life since ``live_since`` (Unix time) among the
        first few in line, else of its oldest game; with none, ``new_game`` (of
        ``seats`` seats, not made yet) is listed and its first seat handed out.  The
        ticket is kept ``keep`` seconds under ``name``: a call of the same name (a
        retry) is answered the same ticket.  Games older than ``lifetime`` seconds
        are dropped on the way.  None when there is no seat to hand out and it
        may not list ``new_game`` (``may_list`` False).

        With ``skill``, only the games whose players' mean skill is within the
        window it asks for (games without a rated player: any) are "in line",
        among the first :data:`~service.store.skill_seek.SKILL_SCAN` (the first
        few of them as above); the player's skill joins the game's with the
        ticket."""
        table_keys = [
            keys.table_key(table, "open"),
            keys.table_key(table, "free"),
            keys.table_key(table, f"ticket:{name}"),
            keys.table_key(table, "seen"),
            keys.table_key(table, "skill"),
        ]
        args: list[Any] = [
            _ms(time.time()),
            _ms(lifetime),
            new_game,
            seats,
            _ms(keep),
            _ms(live_since),
            "1" if may_list else "0",
        ]
        if skill is None:
            game, created, new = self._run(SEEK_SCRIPT, table_keys, args)
        else:
            game, created, new = self._run(SKILL_SEEK_SCRIPT, table_keys, args + skill.args())
        if not _text(game):
            return None
        return Ticket(_text(game), int(_text(created)) / 1000, bool(int(new)))

    def release(
        self, table: str, ticket: Ticket, lifetime: float, player: str | None = None
    ) -> None:
        """Give back a ticket whose seat was not taken (the store failed meanwhile);
        ``player``: the rated player it was handed to (its skill leaves the game's)."""
        self._run(
            RELEASE_SCRIPT,
            [
                keys.table_key(table, "open"),
                keys.table_key(table, "free"),
                keys.table_key(table, "skill"),
            ],
            [ticket.game, _ms(ticket.created_at), _ms(lifetime), player or ""],
        )

    def offer(
        self,
        table: str,
        game_id: str,
        created_at: float,
        seats: int,
        lifetime: float,
        skills: dict[str, float] | None = None,
    ) -> None:
        """Say that ``game_id`` of ``table`` has ``seats`` open seats to offer (0:
        none), and the skills of its rated seated players (player id -> skill)."""
        self._run(
            TABLE_SET_SCRIPT,
            [
                keys.table_key(table, "open"),
                keys.table_key(table, "free"),
                keys.table_key(table, "seen"),
                keys.table_key(table, "skill"),
            ],
            [game_id, _ms(created_at), seats, _ms(lifetime), skill_entries(skills or {})],
        )

    def skills(self, table: str, game_id: str) -> dict[str, float]:
        """The skills ``table`` keeps for ``game_id``'s players (player id -> skill)."""
        with translate_errors():
            found = self._client().hget(keys.table_key(table, "skill"), game_id)
        pairs = (entry.partition("=") for entry in _text(found or b"").split())
        return {player: float(skill) for player, _, skill in pairs}

    def remember(self, key_hash: str, game_id: str, ttl: int) -> None:
        """Note for ``ttl`` seconds that the quick-join keyed ``key_hash`` is taking a
        seat in ``game_id`` (whose write saves the answer to replay)."""
        with translate_errors():
            self._client().set(keys.quick_join_key(key_hash), game_id, ex=ttl)

    def remembered(self, key_hash: str) -> str | None:
        """The game :meth:`remember` noted for ``key_hash``, if any."""
        with translate_errors():
            found = self._client().get(keys.quick_join_key(key_hash))
        return None if found is None else _text(found)


def _keys_of_shard(status: str, shard: int) -> list[str]:
    """The keys of a listing shard, as its scripts take them: its entries, their
    details, their signs of life."""
    return [keys.lobby_key(status, shard, part) for part in ("games", "meta", "seen")]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
