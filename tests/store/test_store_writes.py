"""GameStore's writes against a real redis-server (see tests/conftest.py) or fakeredis:
create, load and commit, results kept apart, version conflicts, concurrent commits,
binary payloads, and write ids of their own in forked workers."""

from __future__ import annotations

import os
import threading

import pytest

from service.store import GameExists, GameNotFound, GameStore, VersionConflict
from tests.store.games import new_id


def test_create_load_commit(store: GameStore) -> None:
    gid = new_id()
    assert store.load_game(gid) is None
    assert store.create(gid, b'{"schema":1,"n":0}', [b'{"type":"created"}']) == 1
    assert store.load_game(gid) == (1, b'{"schema":1,"n":0}', None)
    assert store.commit(gid, 1, b'{"schema":1,"n":1}', [(b'{"type":"moved"}', None)]) == 2
    assert store.commit(gid, 2, b'{"schema":1,"n":2}') == 3
    assert store.load_game(gid) == (3, b'{"schema":1,"n":2}', None)
    events, last, _deadline = store.events(gid, 0)
    assert events == [(1, b'{"type":"created"}'), (2, b'{"type":"moved"}')]
    assert last == 2


def test_results_are_kept_apart_and_rewritten_only_when_given(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d1", public=b'{"id":1}', results=b"[]")
    assert store.load_game(gid) == (1, b"d1", b"[]")
    assert store.commit(gid, 1, b"d2", public=b'{"id":2}') == 2  # results unchanged
    assert store.load_game(gid) == (2, b"d2", b"[]")
    assert store.commit(gid, 2, b"d3", public=b'{"id":3}', results=b'[{"number":1}]') == 3
    assert store.load_game(gid) == (3, b"d3", b'[{"number":1}]')
    assert store.load_public(gid) == (3, None, b'{"id":3}', b'[{"number":1}]')
    other = new_id()
    store.create(other, b"d")  # none given: none stored (a document that holds its own)
    assert store.load_game(other) == (1, b"d", None)
    assert store.load_game(new_id()) is None


def test_create_twice_fails(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"a")
    with pytest.raises(GameExists):
        store.create(gid, b"b", [b"e"])
    assert store.load_game(gid) == (1, b"a", None)
    assert store.events(gid, 0)[:2] == ([], 0)


def test_unknown_game(store: GameStore) -> None:
    with pytest.raises(GameNotFound):
        store.commit("nope", 1, b"x")
    with pytest.raises(GameNotFound):
        store.events("nope", 0)
    assert store.load_with_idempotency("nope", "h")[1] is None


def test_stale_version_conflicts_and_writes_nothing(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"v1")
    store.commit(gid, 1, b"v2", [b"e1"])
    with pytest.raises(VersionConflict) as info:
        store.commit(gid, 1, b"stale", [b"lost"], idempotency=("k", b"fp", b"resp"))
    assert info.value.current_version == 2
    assert store.load_game(gid) == (2, b"v2", None)
    assert store.events(gid, 0)[:2] == ([(1, b"e1")], 1)
    assert store.load_with_idempotency(gid, "k")[1] is None


def test_concurrent_commits_exactly_one_wins(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"start")
    threads = 16
    barrier = threading.Barrier(threads)
    wins: list[int] = []
    conflicts: list[int] = []

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            wins.append(store.commit(gid, 1, b"by %d" % i, [b"event %d" % i]))
        except VersionConflict as exc:
            conflicts.append(exc.current_version)

    workers = [threading.Thread(target=attempt, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert wins == [2]
    assert conflicts == [2] * (threads - 1)
    version, doc, _results = store.load_game(gid) or (0, b"", None)
    assert version == 2
    events, last, _deadline = store.events(gid, 0)
    assert len(events) == 1 and last == 1
    assert events[0][1] == b"event " + doc.split()[-1]


def test_binary_payloads_round_trip(store: GameStore) -> None:
    gid = new_id()
    blob = bytes(range(256))
    store.create(gid, blob, [(blob, 3)])
    assert store.load_game(gid) == (1, blob, None)
    assert store.events(gid, 0, seat=3)[:2] == ([(1, blob)], 1)


def test_write_ids_differ_between_forked_workers() -> None:
    """gunicorn forks its workers from a preloaded master: each must draw its own
    write ids, or two workers could take each other's write as their own."""
    from service.store.script_args import new_write_id

    new_write_id()  # the master has used its generator before forking
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(write, ",".join(new_write_id() for _ in range(3)).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 1000).decode().split(",")
    os.close(read)
    os.close(write)
    parent = [new_write_id() for _ in range(3)]
    assert len(child) == 3 and all(len(i) == 16 for i in child + parent)
    assert not set(child) & set(parent)
