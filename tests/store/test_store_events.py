"""GameStore's event stream: each seat sees the public events and its own, in pages;
a watch is woken by each commit of its game with events, and by nothing else."""

from __future__ import annotations

import time

import pytest

from service.store import GameStore, wakeups
from tests.store.games import commit_later, confirmed, new_id, published, untagged


def test_events_are_filtered_per_seat(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"dealt", (b"hand0", 0), (b"hand1", 1)])
    store.commit(gid, 1, b"d", [(b"drew0", 0), b"discard"])
    assert store.events(gid, 0)[:2] == ([(1, b"dealt"), (5, b"discard")], 5)
    assert store.events(gid, 0, seat=0)[:2] == ([(1, b"dealt"), (2, b"hand0"), (4, b"drew0"),
                                             (5, b"discard")], 5)  # fmt: skip
    assert store.events(gid, 0, seat=1)[:2] == ([(1, b"dealt"), (3, b"hand1"), (5, b"discard")], 5)
    # The cursor moves past other seats' private events.
    assert store.events(gid, 2, seat=1)[:2] == ([(3, b"hand1"), (5, b"discard")], 5)
    assert store.events(gid, 3, seat=1)[:2] == ([(5, b"discard")], 5)
    assert store.events(gid, 5, seat=1)[:2] == ([], 5)
    # A cursor beyond the end is clamped to the last seq.
    assert store.events(gid, 99)[:2] == ([], 5)
    # Pages of `limit` events.
    assert store.events(gid, 0, seat=0, limit=2)[:2] == ([(1, b"dealt"), (2, b"hand0")], 2)
    assert store.events(gid, 0, seat=1, limit=2)[:2] == ([(1, b"dealt")], 2)


def test_a_watch_is_woken_by_its_games_commits_only(store: GameStore) -> None:
    gid, other = new_id(), new_id()
    store.create(gid, b"d", [b"first"])
    store.create(other, b"d", [b"first"])
    with store.watch(gid) as watch:
        confirmed(watch)
        commit_later(store, other, 1, [b"elsewhere"], 0).join()
        assert not watch.wait(0.5)
        commit_later(store, gid, 1, [b"second", (b"secret", 1)], 0.2)
        page, took = published(watch, 1, seat=0)
        assert 0.1 < took < 3
        assert page == ([(2, b"second")], 3, None)  # what the write published
        assert store.events(gid, 1, seat=0) == page  # is what the stream holds
        assert store.waiting() == 1
    assert store.waiting() == 0


def test_a_write_without_events_wakes_nobody(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"first"])
    with store.watch(gid) as watch:
        confirmed(watch)
        store.commit(gid, 1, b"d2")
        assert not watch.wait(0.5)
        store.commit(gid, 2, b"d3", [b"e"], deadline=1e10)
        assert published(watch, 1)[0] == ([(2, b"e")], 2, 1e10)


def test_many_watches_of_one_game_are_all_woken(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"first"])
    with store.watch(gid) as first, store.watch(gid) as second:
        confirmed(first)
        confirmed(second)  # the one subscription's confirmation wakes both
        store.commit(gid, 1, b"d2", [b"e"])
        for watch in (first, second):
            assert published(watch, 1)[0] == ([(2, b"e")], 2, None)
    with store.watch(gid) as again:  # the channel lingers: no new subscription
        store.commit(gid, 2, b"d3", [b"e"])
        assert published(again, 2)[0] == ([(3, b"e")], 3, None)


def test_a_channel_without_waiters_is_unsubscribed_after_a_while(
    store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wakeups, "LINGER_SECONDS", 0.2)
    gid = new_id()
    store.create(gid, b"d", [b"first"])
    with store.watch(gid) as watch:
        confirmed(watch)
    time.sleep(wakeups.LISTEN_SECONDS * 2 + 0.3)  # a sweep of the listener has run
    with store.watch(gid) as again:
        confirmed(again)  # a new subscription
        store.commit(gid, 1, b"d2", [b"e"])
        assert published(again, 1)[0] == ([(2, b"e")], 2, None)


def test_a_reader_beginning_its_watch_misses_nothing(store: GameStore) -> None:
    """Watch first, read after: a commit racing the subscription is still read."""
    gid = new_id()
    store.create(gid, b"d", [b"first"])
    for version in range(1, 30):
        thread = commit_later(store, gid, version, [b"e"], 0)
        with store.watch(gid) as watch:
            found = store.events(gid, version).events
            while not found:  # published (or, racing the subscription, read)
                assert watch.wait(5)
                taken = watch.take(version, None)
                found = (untagged(taken) if taken else store.events(gid, version)).events
            assert found == [(version + 1, b"e")]
        thread.join()
