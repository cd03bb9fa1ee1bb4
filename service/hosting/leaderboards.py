"""Leaderboards: an app's players ranked by rating, per ruleset and table size.

A player is on a board once it has played ``LEADERBOARD_MIN_GAMES`` rated games of
the board's ruleset and table size; its entry is what was last posted for it
(:func:`post`, called after each change of its rating), ranked by rating, highest
first, ties by player id (bytewise): a total order, so every player has one rank
and a page's cursor, the last entry it gave, never shifts later pages -- a player
whose rating changes between two pages is met at its new place, if that is still
ahead, or not at all if it moved behind.

The Redis side, shards and all, is :mod:`service.store.leaderboards`.  Plain Python
over a store, like :mod:`service.hosting.write_loop`.

>>> Board("a1b2c3d4e5", "classic", 2).name
'a1b2c3d4e5.classic.2'
>>> parse_cursor(cursor_of(1700000000000, 12.5, "u1"))
(1700000000000, 12.5, 'u1')
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Any

from service.config import Config
from service.engine.options import PRESETS
from service.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from service.hosting.players import PLAYER_ID_PATTERN
from service.store.game_store import GameStore
from service.store.leaderboards import Row

TOP_LIMIT = 20
"""Entries of a page unless asked for another number."""

TOP_MAX_LIMIT = 100
"""The most entries of a page."""

AROUND_COUNT = 5
"""Entries above and below a player unless asked for another number."""

AROUND_MAX_COUNT = 50
"""The most entries above (and below) a player."""

PAGE_ROUNDS = 3
"""The most reads of a page: a read may end early where one shard's entries run out
(:meth:`service.store.leaderboards.Leaderboards.page`), and the next reads on."""

CURSOR_PATTERN = rf"^[0-9]{{1,15}}:-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?:{PLAYER_ID_PATTERN}$"
"""A page's cursor: when the walk began (ms), and the point after which the next page
begins -- a rating and a player id, usually the last entry given:
``<ms>:<rating>:<player id>``."""

_PLAYER_ID = re.compile(PLAYER_ID_PATTERN)


class BoardError(ValueError):
    """No such board (a ruleset or table size that has none), or a bad entry."""


@dataclass(frozen=True, slots=True)
class Board:
    """One leaderboard: an app's, of one ruleset and table size."""

    app: str
    ruleset: str
    table_size: int

    def __post_init__(self) -> None:
        if self.ruleset not in PRESETS:
            raise BoardError(
                f"no leaderboard of ruleset {self.ruleset!r}: the rulesets are {', '.join(PRESETS)}"
            )
        if not MIN_PLAYERS <= self.table_size <= MAX_PLAYERS:
            raise BoardError(
                f"no leaderboard of {self.table_size} seats: tables have "
                f"{MIN_PLAYERS} to {MAX_PLAYERS} seats"
            )
        if not self.app or "{" in self.app or "}" in self.app:
            raise BoardError(f"not an app id: {self.app!r}")

    @property
    def name(self) -> str:
        """The board's name in the store: ``<app>.<ruleset>.<table size>``."""
        return f"{self.app}.{self.ruleset}.{self.table_size}"


@dataclass(frozen=True, slots=True)
class Entry:
    """A player's place on a board: its rank (1: the highest rating), id, rating and
    rated games."""

    rank: int
    player_id: str
    rating: float
    games: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "player_id": self.player_id,
            "rating": self.rating,
            "games": self.games,
        }


@dataclass(frozen=True, slots=True)
class Page:
    """A page of a board: its entries, the next page's cursor (None: the last page)
    and the board's players."""

    entries: list[Entry]
    next: str | None
    total: int


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's place on a board with its neighbours: ``rank`` None (and no
    entries) when the player is not on the board."""

    player_id: str
    rank: int | None
    entries: list[Entry]
    total: int


def cursor_of(since_ms: int, rating: float, player_id: str) -> str:
    """The cursor of a walk begun at ``since_ms`` whose next page begins after the
    point ``(rating, player_id)`` (the rating exactly: ``repr`` round-trips)."""
    return f"{since_ms}:{rating!r}:{player_id}"


def parse_cursor(cursor: str) -> tuple[int, float, str]:
    """``(walk began ms, rating, player id)`` of a cursor; :class:`BoardError` if it
    is none.

    >>> parse_cursor("1700000000000:1e999:u1")
    Traceback (most recent call last):
    ...
    service.hosting.leaderboards.BoardError: not a cursor of a leaderboard: '1700000000000:1e999:u1'
    """
    if re.fullmatch(CURSOR_PATTERN, cursor) is None:
        raise BoardError(f"not a cursor of a leaderboard: {cursor!r}")
    since, rating, player_id = cursor.split(":", 2)
    value = float(rating)
    if not math.isfinite(value):
        raise BoardError(f"not a cursor of a leaderboard: {cursor!r}")
    return int(since), value + 0.0, player_id


def min_games(config: Config) -> int:
    """The rated games a player needs to be on a board (``LEADERBOARD_MIN_GAMES``)."""
    return config.leaderboard_min_games


def post(
    store: GameStore, config: Config, board: Board, player_id: str, rating: float, games: int
) -> bool:
    """Post ``player_id``'s ``rating`` (the displayed one) after ``games`` rated games
    of ``board``'s ruleset and table size: on the board with at least
    :func:`min_games`, else off it.  True when the player is on the board now.  A post
    with fewer games than the board holds for the player (a late retry) changes
    nothing; posting the same again changes nothing either."""
    if _PLAYER_ID.fullmatch(player_id) is None:
        raise BoardError(f"not a player id: {player_id!r}")
    if not math.isfinite(rating) or games < 0:
        raise BoardError(f"a rating is finite and its games 0 or more: {rating!r}, {games!r}")
    listed = games >= min_games(config)
    now_ms = int(time.time() * 1000)
    done = store.leaderboards.post(board.name, player_id, rating if listed else None, games, now_ms)
    return done == 1 or (done == -1 and store.leaderboards.row(board.name, player_id) is not None)


def remove(store: GameStore, board: Board, player_id: str) -> None:
    """Take ``player_id`` off ``board`` (a reset rating)."""
    store.leaderboards.remove([board.name], player_id)


def remove_everywhere(store: GameStore, app: str, player_id: str) -> None:
    """Take ``player_id`` off every board of ``app`` (a barred player): one pipeline."""
    boards = [
        Board(app, ruleset, size).name
        for ruleset in PRESETS
        for size in range(MIN_PLAYERS, MAX_PLAYERS + 1)
    ]
    store.leaderboards.remove(boards, player_id)


def top(store: GameStore, board: Board, limit: int, cursor: str | None = None) -> Page:
    """A page of ``board``: its ``limit`` best entries after ``cursor`` (a page's
    ``next``; None: the first page, which begins a walk) left unchanged since the walk
    began: one round trip per node, rarely more (:data:`PAGE_ROUNDS` at most).  A page
    may come shorter than ``limit`` while ``next`` is not None (when many entries
    changed during the walk)."""
    if cursor is None:
        since, point = int(time.time() * 1000), None
    else:
        since, rating, player_id = parse_cursor(cursor)
        point = (rating, player_id)
    entries: list[Entry] = []
    for _round in range(PAGE_ROUNDS):  # a page cut short by one shard: read on
        found = store.leaderboards.page(board.name, point, since, limit - len(entries))
        entries += [Entry(rank, row.player_id, row.rating, row.games) for rank, row in found.rows]
        point = found.next
        if point is None or len(entries) == limit:
            break
    following = None if point is None else cursor_of(since, *point)
    return Page(entries, following, found.total)


def around(store: GameStore, board: Board, player_id: str, count: int) -> Standing:
    """``player_id``'s entry on ``board`` with the ``count`` entries above it and the
    ``count`` below (fewer at either end): two round trips, its own entry's and one
    per node.  Its rank is one more than the entries ahead of it, on every shard."""
    for _attempt in range(3):
        mine = store.leaderboards.row(board.name, player_id)
        if mine is None:
            break
        window = store.leaderboards.window(
            board.name, (mine.rating, player_id), before=count, after=count + 1
        )
        if window.below and window.below[0] == mine:  # else it moved between the reads
            rank = window.ahead + 1
            entries = _ranked(window.above, rank - len(window.above))
            entries += _ranked(window.below, rank)
            return Standing(player_id, rank, entries, window.total)
    return Standing(player_id, None, [], store.leaderboards.total(board.name))


def _ranked(rows: list[Row], first: int) -> list[Entry]:
    return [Entry(first + i, row.player_id, row.rating, row.games) for i, row in enumerate(rows)]
