"""Leaderboards on a real Redis: paging visits every player once, in order; while
ratings change between pages it never repeats a player and gives every player left
unchanged; a player's rank agrees with a brute-force sort; the minimum of games is
honoured; stale posts change nothing.  The same checks run on a
real Redis Cluster in tests/cluster/test_leaderboards_on_cluster.py."""

from __future__ import annotations

import itertools
import random

import pytest

from service.config import Config
from service.hosting import leaderboards
from service.hosting.leaderboards import Board, BoardError, Entry
from service.store import GameStore, connect

BOARD = Board("a1b2c3d4e5", "classic", 2)


def order_key(player: str, ratings: dict[str, float]) -> tuple[float, bytes]:
    """The board's order: highest rating first, ties by player id (bytewise)."""
    return -ratings[player], player.encode()


def fill(
    store: GameStore, config: Config, board: Board, players: int, seed: int, distinct: int = 60
) -> dict[str, float]:
    """``players`` players on ``board`` with ratings from ``distinct`` values (many
    ties), ids of varied case and length; their ratings."""
    rnd = random.Random(seed)
    ratings: dict[str, float] = {}
    for n in range(players):
        player = rnd.choice(["u", "U", "p.", "x-", "a@b_"]) + str(n * 7919 % 100_003)
        ratings[player] = rnd.randrange(distinct) * 0.5 - 5
        assert leaderboards.post(store, config, board, player, ratings[player], 5 + n % 4)
    return ratings


def walk(store: GameStore, board: Board, limit: int, between: object = None) -> list[list[Entry]]:
    """Every page of ``board``, calling ``between()`` after each."""
    pages, cursor = [], None
    while True:
        page = leaderboards.top(store, board, limit, cursor)
        pages.append(page.entries)
        if callable(between):
            between()
        if page.next is None:
            return pages
        cursor = page.next


def test_paging_visits_every_player_once_in_order(store: GameStore, config: Config) -> None:
    ratings = fill(store, config, BOARD, 3000, seed=1)
    expected = sorted(ratings, key=lambda p: order_key(p, ratings))
    pages = walk(store, BOARD, 97)
    given = [entry for page in pages for entry in page]
    assert [e.player_id for e in given] == expected
    assert [e.rank for e in given] == list(range(1, 3001))
    assert all(e.rating == ratings[e.player_id] for e in given)
    assert all(len(page) == 97 for page in pages[:-1]) and 0 < len(pages[-1]) <= 97
    assert leaderboards.top(store, BOARD, 100).total == 3000


def test_paging_while_ratings_change_never_repeats(store: GameStore, config: Config) -> None:
    ratings = fill(store, config, BOARD, 2500, seed=2)
    rnd = random.Random(3)
    moved: set[str] = set()

    def shuffle_some() -> None:
        for player in rnd.sample(sorted(ratings), 40):
            ratings[player] = rnd.randrange(60) * 0.5 - 5
            leaderboards.post(store, config, BOARD, player, ratings[player], 9)
            moved.add(player)

    pages = walk(store, BOARD, 50, shuffle_some)
    given = [entry for page in pages for entry in page]
    ids = [e.player_id for e in given]
    assert len(ids) == len(set(ids))  # nobody twice
    assert set(ids) >= set(ratings) - moved  # everyone left unchanged was met, once
    keys = [(-e.rating, e.player_id.encode()) for e in given]
    assert keys == sorted(keys)  # in the board's order
    assert len(moved) > 500
    # ranks are places on the board as it is when each page is read
    assert all(a.rank < b.rank for page in pages for a, b in itertools.pairwise(page))
    # the board as it ends: a new walk gives everyone once, ranks 1..n
    final = [entry for page in walk(store, BOARD, 100) for entry in page]
    assert [e.player_id for e in final] == sorted(ratings, key=lambda p: order_key(p, ratings))
    assert [e.rank for e in final] == list(range(1, len(ratings) + 1))


def test_around_me_agrees_with_a_brute_force_sort(store: GameStore, config: Config) -> None:
    ratings = fill(store, config, BOARD, 2000, seed=4, distinct=25)
    expected = sorted(ratings, key=lambda p: order_key(p, ratings))
    for player in [*random.Random(5).sample(expected, 60), expected[0], expected[-1]]:
        place = leaderboards.around(store, BOARD, player, 4)
        at = expected.index(player)
        assert place.rank == at + 1
        assert place.total == 2000
        window = expected[max(0, at - 4) : at + 5]
        assert [e.player_id for e in place.entries] == window
        assert [e.rank for e in place.entries] == list(
            range(max(0, at - 4) + 1, max(0, at - 4) + 1 + len(window))
        )


def test_min_games_and_stale_posts(store: GameStore, redis_url: str) -> None:
    config = Config.from_env({"REDIS_URL": redis_url, "LEADERBOARD_MIN_GAMES": "3"})
    assert not leaderboards.post(store, config, BOARD, "u1", 30.0, 2)
    assert leaderboards.around(store, BOARD, "u1", 3).rank is None
    assert leaderboards.top(store, BOARD, 10).entries == []
    assert leaderboards.post(store, config, BOARD, "u1", 31.0, 3)
    assert leaderboards.post(store, config, BOARD, "u2", 20.0, 7)
    # a late retry of an older post (fewer games) changes nothing
    assert leaderboards.post(store, config, BOARD, "u2", 99.0, 6)  # still on it, as before
    assert leaderboards.post(store, config, BOARD, "u2", 20.0, 7)  # the same again: no change
    page = leaderboards.top(store, BOARD, 10)
    assert [(e.player_id, e.rating, e.games, e.rank) for e in page.entries] == [
        ("u1", 31.0, 3, 1),
        ("u2", 20.0, 7, 2),
    ]
    leaderboards.remove(store, BOARD, "u1")
    assert [e.player_id for e in leaderboards.top(store, BOARD, 10).entries] == ["u2"]
    other = Board("a1b2c3d4e5", "classic", 3)  # each table size its own board
    assert leaderboards.top(store, other, 10).total == 0
    assert leaderboards.post(store, config, other, "u2", 5.0, 3)
    leaderboards.remove_everywhere(store, "a1b2c3d4e5", "u2")  # a barred player
    assert leaderboards.top(store, BOARD, 10).total == leaderboards.top(store, other, 10).total == 0


def test_boards_refuse_what_is_not_one(store: GameStore, config: Config) -> None:
    for ruleset, size in (("chess", 2), ("classic", 1), ("classic", 9)):
        with pytest.raises(BoardError):
            Board("a1b2c3d4e5", ruleset, size)
    for cursor in ("", "1:x:u1", "1:1e999:u1", "1:nan:u1", "1:1.0:", "1:1.0:u{1}", "1.0:u1"):
        with pytest.raises(BoardError):
            leaderboards.top(store, BOARD, 10, cursor)
    with pytest.raises(BoardError):
        leaderboards.post(store, config, BOARD, "u 1", 1.0, 9)
    with pytest.raises(BoardError):
        leaderboards.post(store, config, BOARD, "u1", float("inf"), 9)


def test_negative_and_extreme_ratings_keep_their_order(store: GameStore, config: Config) -> None:
    values = [-1e300, -7.25, -0.0, 0.0, 1e-9, 3.0000000000000004, 3.0, 1e300]
    for n, rating in enumerate(values):
        leaderboards.post(store, config, BOARD, f"p{n}", rating, 9)
    first = leaderboards.top(store, BOARD, 3)
    rest = leaderboards.top(store, BOARD, 10, first.next)
    given = [(e.player_id, e.rating) for e in first.entries + rest.entries]
    expected = sorted(
        ((f"p{n}", r + 0.0) for n, r in enumerate(values)), key=lambda x: (-x[1], x[0])
    )
    assert given == expected


def test_a_walk_through_a_board_that_changed_almost_entirely(
    store: GameStore, config: Config
) -> None:
    """Pages skip more changed entries than a shard reads at once (short or empty
    pages with a cursor), and still end, giving each player left unchanged once."""
    ratings = fill(store, config, BOARD, 1500, seed=6)
    first = leaderboards.top(store, BOARD, 5)
    assert first.next is not None
    rnd = random.Random(7)
    kept = set(rnd.sample(sorted(ratings), 4))
    for player in sorted(ratings):
        if player not in kept:
            ratings[player] = rnd.randrange(60) * 0.5 - 5
            leaderboards.post(store, config, BOARD, player, ratings[player], 9)
    given, cursor = list(first.entries), first.next
    while cursor is not None:
        page = leaderboards.top(store, BOARD, 5, cursor)
        given += page.entries
        cursor = page.next
    ids = [e.player_id for e in given]
    assert len(ids) == len(set(ids))
    assert set(ids) >= kept - {e.player_id for e in first.entries}
    assert set(ids) <= kept | {e.player_id for e in first.entries}
    # one read of the store stops where a shard read its most, short of 5 entries
    since = leaderboards.parse_cursor(first.next)[0]
    read = store.leaderboards.page(BOARD.name, None, since, 5)
    assert len(read.rows) < 5 and read.next is not None


def test_the_embedded_store_serves_boards_too() -> None:
    """Without REDIS_URL the service runs on its embedded store (fakeredis with Lua):
    the same scripts page and rank there."""
    config = Config.from_env({})
    embedded = GameStore(connect(config), config=config)
    try:
        ratings = fill(embedded, config, BOARD, 300, seed=8, distinct=20)
        expected = sorted(ratings, key=lambda p: order_key(p, ratings))
        assert [e.player_id for page in walk(embedded, BOARD, 17) for e in page] == expected
        place = leaderboards.around(embedded, BOARD, expected[100], 3)
        assert place.rank == 101
        assert [e.player_id for e in place.entries] == expected[97:104]
    finally:  # the embedded server is the process's: leave it as it was
        for shard in embedded.leaderboards.shard_keys(BOARD.name):
            embedded.client.delete(*shard)
