"""GameStore's event stream: each seat sees the public events and its own, in pages,
and the long poll wakes for an event it may see, or times out empty."""

from __future__ import annotations

import time

from service.store import GameStore
from tests.store.games import commit_later, new_id


def test_events_are_filtered_per_seat(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"dealt", (b"hand0", 0), (b"hand1", 1)])
    store.commit(gid, 1, b"d", [(b"drew0", 0), b"discard"])
    assert store.events(gid, 0) == ([(1, b"dealt"), (5, b"discard")], 5)
    assert store.events(gid, 0, seat=0) == ([(1, b"dealt"), (2, b"hand0"), (4, b"drew0"),
                                             (5, b"discard")], 5)  # fmt: skip
    assert store.events(gid, 0, seat=1) == ([(1, b"dealt"), (3, b"hand1"), (5, b"discard")], 5)
    # The cursor moves past other seats' private events.
    assert store.events(gid, 2, seat=1) == ([(3, b"hand1"), (5, b"discard")], 5)
    assert store.events(gid, 3, seat=1) == ([(5, b"discard")], 5)
    assert store.events(gid, 5, seat=1) == ([], 5)
    # A cursor beyond the end is clamped to the last seq.
    assert store.events(gid, 99) == ([], 5)
    # Pages of `limit` events.
    assert store.events(gid, 0, seat=0, limit=2) == ([(1, b"dealt"), (2, b"hand0")], 2)
    assert store.events(gid, 0, seat=1, limit=2) == ([(1, b"dealt")], 2)


def test_long_poll_returns_early_when_an_event_arrives(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"first"])
    thread = commit_later(store, gid, 1, [b"second"], 0.3)
    started = time.monotonic()
    assert store.events(gid, 1, wait_seconds=10) == ([(2, b"second")], 2)
    assert 0.2 < time.monotonic() - started < 3
    thread.join()


def test_long_poll_ignores_other_seats_private_events(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d")
    threads = [
        commit_later(store, gid, 1, [(b"secret", 1)], 0.2),
        commit_later(store, gid, 2, [b"public"], 0.6),
    ]
    started = time.monotonic()
    assert store.events(gid, 0, seat=0, wait_seconds=10) == ([(2, b"public")], 2)
    assert 0.5 < time.monotonic() - started < 3
    for thread in threads:
        thread.join()


def test_long_poll_times_out_empty(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"e"])
    started = time.monotonic()
    assert store.events(gid, 1, wait_seconds=1.6) == ([], 1)
    assert 1.5 < time.monotonic() - started < 3.5
    # Past the chunk length (1 s) and with nothing to wait for, no wait at all.
    started = time.monotonic()
    assert store.events(gid, 0, wait_seconds=5) == ([(1, b"e")], 1)
    assert time.monotonic() - started < 0.5
