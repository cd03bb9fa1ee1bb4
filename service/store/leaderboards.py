"""Leaderboards in Redis: one board per app, ruleset and table size, each split in
shards so that no single key is hot on a Redis Cluster.

Layout (:func:`service.store.keys.leaderboard_key`): a board of ``shards`` shards
(``LEADERBOARD_SHARDS``) keeps a player in shard :func:`shard_of` of its id, a pair
of keys under the shard's own hash tag -- its slots spaced evenly over the 16384, so
the shards spread over a cluster's nodes:

* ``...:ratings`` sorted set -- member the player id, score *minus* its rating: Redis
  orders a sorted set by score, then by member (bytewise), so ascending order is the
  board's order, the highest rating first and ties by player id (a total order);
* ``...:entries`` hash -- player id -> ``<rated games>:<when the entry changed, ms>``.

A read runs one script on every shard, sent in one pipeline (one round trip per node
on a cluster, where redis-py's pipeline sends each node its shards' commands): each
script places a point ``(rating, player id)`` in its shard's order -- the entries of
higher ratings by ``ZCOUNT``, the tied ones by a binary search over ranks
(``O(log n)`` each) -- and answers how many entries are before the point, the entries
after it (and before it, for a player's place) and the shard's size.  Merging those
gives a page after a point (:meth:`Leaderboards.page`: entries unchanged since a
walk began, ending where every shard is known to be read) or the entries around a
player (:meth:`Leaderboards.window`), whose rank is one more than the sum of the
entries before it in every shard.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redis.exceptions import NoScriptError

from service.store import keys
from service.store.failures import translate_errors
from service.store.leaderboard_scripts import PAGE_SCRIPT, POST_SCRIPT, WINDOW_SCRIPT
from service.store.redis_client import RedisClient

_SHAS = {
    script: hashlib.sha1(script.encode()).hexdigest() for script in (WINDOW_SCRIPT, PAGE_SCRIPT)
}


def shard_of(player_id: str, shards: int) -> int:
    """The shard of a board that holds ``player_id``: stable across processes.

    >>> shard_of("u1", 16), shard_of("u1", 1)
    (10, 0)
    """
    digest = hashlib.sha256(player_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % shards


@dataclass(frozen=True, slots=True)
class Row:
    """A player on a board: its id, rating and rated games."""

    player_id: str
    rating: float
    games: int


@dataclass(frozen=True, slots=True)
class Window:
    """Entries of a board around a point of its order: ``ahead`` entries of the board
    are before the point; ``above`` the last of them (in the board's order, the
    nearest last), ``below`` the first entries from the point on; ``total`` the
    board's entries."""

    ahead: int
    above: list[Row]
    below: list[Row]
    total: int


@dataclass(frozen=True, slots=True)
class Page:
    """A page of a walk: its ``(rank, row)``, in order; the point after which the next
    page begins (None: this was the last); the board's entries."""

    rows: list[tuple[int, Row]]
    next: tuple[float, str] | None
    total: int


Key = tuple[float, bytes]
"""An entry's place in a shard's order: its score (minus its rating), its member."""


def per_shard(limit: int, shards: int) -> int:
    """How many entries of a page each shard gives at most: twice its share and 4
    more (never more than the page), so that a page is rarely cut short by one
    shard's entries while the shards read a few times the page, not ``shards`` times.

    >>> per_shard(20, 16), per_shard(100, 16), per_shard(20, 1), per_shard(3, 16)
    (8, 18, 20, 3)
    """
    return min(limit, 2 * -(-limit // shards) + 4)


def _score(rating: float) -> str:
    """A rating's stored score: its negation, exactly (``repr`` round-trips).

    >>> _score(1500.25), _score(0.0), _score(-3.0)
    ('-1500.25', '0.0', '3.0')
    """
    if not math.isfinite(rating):
        raise ValueError(f"a rating must be a finite number, got {rating!r}")
    return repr(-rating + 0.0)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _rows(reply: list[Any]) -> list[tuple[Key, Row, int]]:
    """The entries of a script's reply from its fourth item on: each entry's key, its
    row and when it last changed (ms)."""
    out = []
    for member, score, entry in zip(reply[3::3], reply[4::3], reply[5::3], strict=True):
        games, _, changed = _text(entry).partition(":")
        z = float(score)
        player = _text(member)
        out.append(((z, player.encode()), Row(player, -z + 0.0, int(games)), int(changed or 0)))
    return out


def _order(row: Row) -> Key:
    return -row.rating + 0.0, row.player_id.encode()


def _point(point: tuple[float, str] | None) -> list[str]:
    return ["", ""] if point is None else [_score(point[0]), point[1]]


class Leaderboards:
    """The leaderboards' Redis calls (thread-safe; one per :class:`GameStore`).
    ``board`` is a board's name (``<app>.<ruleset>.<table size>``)."""

    def __init__(self, client: Callable[[], RedisClient], shards: int) -> None:
        """``client``: a function returning the store's client (connected lazily);
        ``shards``: ``LEADERBOARD_SHARDS``."""
        if not 1 <= shards <= 1024:
            raise ValueError(f"a board has 1 to 1024 shards, not {shards}")
        self._client = client
        self.shards = shards
        self._post: Any = None

    def _keys(self, board: str, shard: int) -> list[str]:
        return [
            keys.leaderboard_key(board, shard, self.shards, "ratings"),
            keys.leaderboard_key(board, shard, self.shards, "entries"),
        ]

    def shard_keys(self, board: str) -> list[list[str]]:
        """Each shard's keys (its ratings, its entries), by shard."""
        return [self._keys(board, shard) for shard in range(self.shards)]

    def post(
        self, board: str, player_id: str, rating: float | None, games: int, now_ms: int
    ) -> int:
        """Put ``player_id`` on ``board`` at ``rating`` with ``games`` rated games,
        changed at ``now_ms`` (None: take it off the board).  Returns 1 when it is on
        the board as posted, 0 when taken off, -1 when the board holds it with more
        games already (a stale post, which changes nothing)."""
        score = "" if rating is None else _score(rating)
        client = self._client()
        if self._post is None:
            self._post = client.register_script(POST_SCRIPT)
        key_list = self._keys(board, shard_of(player_id, self.shards))
        with translate_errors():
            return int(self._post(keys=key_list, args=[player_id, score, int(games), now_ms]))

    def remove(self, boards: list[str], player_id: str) -> None:
        """Take ``player_id`` off each of ``boards``, whatever its games: one pipeline
        (one round trip per node)."""
        shard = shard_of(player_id, self.shards)
        with translate_errors():
            pipe = self._client().pipeline(transaction=False)
            for board in boards:
                ratings, entries = self._keys(board, shard)
                pipe.zrem(ratings, player_id)
                pipe.hdel(entries, player_id)
            pipe.execute()

    def row(self, board: str, player_id: str) -> Row | None:
        """``player_id``'s entry on ``board`` (None: not on it), in one round trip."""
        ratings, entries = self._keys(board, shard_of(player_id, self.shards))
        with translate_errors():
            pipe = self._client().pipeline(transaction=False)
            pipe.zscore(ratings, player_id)
            pipe.hget(entries, player_id)
            score, entry = pipe.execute()
        if score is None:
            return None
        games = _text(entry or b"0").partition(":")[0]
        return Row(player_id, -float(score) + 0.0, int(games))

    def total(self, board: str) -> int:
        """How many players ``board`` holds (one round trip per node)."""
        with translate_errors():
            pipe = self._client().pipeline(transaction=False)
            for ratings, _entries in self.shard_keys(board):
                pipe.zcard(ratings)
            return sum(int(n) for n in pipe.execute())

    def window(self, board: str, point: tuple[float, str], *, before: int, after: int) -> Window:
        """The entries of ``board`` around ``point`` (``(rating, player id)``):
        ``before`` entries before it and ``after`` from it on.  One script per shard,
        all in one pipeline: one round trip per node."""
        replies = self._run_everywhere(WINDOW_SCRIPT, board, [*_point(point), "0", before, after])
        ahead = total = 0
        above: list[list[Row]] = []
        below: list[list[Row]] = []
        for reply in replies:
            size, at, first = int(reply[0]), int(reply[1]), int(reply[2])
            total += size
            ahead += at
            rows = [row for _key, row, _changed in _rows(reply)]
            above.append(rows[: at - first])
            below.append(rows[at - first :])
        merged_above = list(heapq.merge(*above, key=_order))
        merged_below = list(heapq.merge(*below, key=_order))
        return Window(
            ahead,
            merged_above[max(0, len(merged_above) - before) :],
            merged_below[:after],
            total,
        )

    def page(self, board: str, after: tuple[float, str] | None, since_ms: int, limit: int) -> Page:
        """Up to ``limit`` entries of ``board`` after the point ``after`` (None: from
        the first) that have not changed since ``since_ms``, with their ranks now.

        Each shard gives at most :func:`per_shard` of them, reading at most four
        times as many entries and 64 more; the page ends where every shard is known
        to be read, so no entry between two points is left out and none is given
        twice -- and a page may come shorter than ``limit``, with a next point, when
        one shard's entries come first (or many changed since).  One round trip per
        node."""
        wanted = per_shard(limit, self.shards)
        replies = self._run_everywhere(
            PAGE_SCRIPT, board, [*_point(after), "1", wanted, 4 * wanted + 64, since_ms]
        )
        ahead = total = 0
        floor: Key | None = None  # every shard was read down to here
        read: list[list[Key]] = []
        kept: list[tuple[Key, Row]] = []
        for reply in replies:
            total += int(reply[0])
            ahead += int(reply[1])
            rows = _rows(reply)
            read.append([key for key, _row, _changed in rows])
            kept += [(key, row) for key, row, changed in rows if changed <= since_ms]
            if not int(reply[2]) and rows and (floor is None or rows[-1][0] < floor):
                floor = rows[-1][0]
        found = sorted(item for item in kept if floor is None or item[0] <= floor)
        shown = found[:limit]
        ranked = [
            (1 + ahead + sum(bisect.bisect_left(keys_read, key) for keys_read in read), row)
            for key, row in shown
        ]
        if len(found) > limit:
            last = shown[-1][1]
            return Page(ranked, (last.rating, last.player_id), total)
        if floor is None:
            return Page(ranked, None, total)
        return Page(ranked, (-floor[0] + 0.0, floor[1].decode()), total)

    def _run_everywhere(self, script: str, board: str, args: list[Any]) -> list[Any]:
        """``script``'s reply on every shard of ``board``, in one pipeline (the script
        is loaded, on every primary, when Redis lacks it)."""
        client = self._client()
        sha = _SHAS[script]
        with translate_errors():
            for attempt in range(2):
                pipe = client.pipeline(transaction=False)
                for key_list in self.shard_keys(board):
                    pipe.execute_command("EVALSHA", sha, len(key_list), *key_list, *args)
                try:
                    return list(pipe.execute())
                except NoScriptError:
                    if attempt:
                        raise
                    client.script_load(script)
        raise AssertionError("unreachable")
