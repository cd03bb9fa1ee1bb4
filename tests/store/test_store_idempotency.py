"""GameStore's idempotency records: stored with the create or commit they answer,
replayed on a retry, recognised after a lost reply, and a bounded number per game."""

from __future__ import annotations

import pytest
import redis

from service.store import GameExists, GameStore, IdempotentReplay, VersionConflict, key
from tests.lost_reply import LostReply
from tests.store.games import new_id


def test_a_keyed_create_saves_its_record_and_a_retry_finds_it(store: GameStore) -> None:
    gid = new_id()
    created = store.create(gid, b"a", [b"e"], idempotency=("h", b"fp", b"answer"))
    assert created == 1 and created.last.seq == 1
    last = f"1.{created.last.tag}".encode()  # the id of the write's last event
    assert store.load_with_idempotency(gid, "h") == ((1, b"a", None), (b"fp", b"answer", last))
    with pytest.raises(IdempotentReplay) as replayed:
        store.create(gid, b"b", [b"e2"], idempotency=("h", b"fp2", b"other"))
    assert (replayed.value.fingerprint, replayed.value.response) == (b"fp", b"answer")
    assert replayed.value.last == last
    with pytest.raises(GameExists):
        store.create(gid, b"b", idempotency=("other", b"fp", b"answer"))
    assert store.load_game(gid) == (1, b"a", None)
    assert store.events(gid, 0)[:2] == ([(1, b"e")], 1)
    ttl = store.client.ttl(key(gid, "idem"))
    assert 0 < ttl <= min(store.idempotency_ttl_seconds, store.game_ttl_seconds)


def test_idempotency_is_stored_with_the_commit(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"v1")
    written = store.commit(gid, 1, b"v2", [b"moved"], idempotency=("h", b"fp", b"answer"))
    assert written == 2 and written.last.seq == 1
    last = f"1.{written.last.tag}".encode()
    assert store.load_with_idempotency(gid, "h")[1] == (b"fp", b"answer", last)
    assert store.load_with_idempotency(gid, "h") == ((2, b"v2", None), (b"fp", b"answer", last))
    assert store.load_with_idempotency(gid, "other") == ((2, b"v2", None), None)
    assert store.load_with_idempotency(new_id(), "h") == (None, None)
    # A retry: nothing is written, the first answer comes back (whatever the version).
    for version in (1, 2):
        with pytest.raises(IdempotentReplay) as info:
            store.commit(gid, version, b"again", [b"moved again"], idempotency=("h", b"x", b"y"))
        assert (info.value.fingerprint, info.value.response) == (b"fp", b"answer")
    assert store.load_game(gid) == (2, b"v2", None)
    assert store.events(gid, 0)[:2] == ([(1, b"moved")], 1)
    # Keys are per game.
    assert store.load_with_idempotency(new_id(), "h")[1] is None


def test_a_write_resent_after_a_lost_reply_is_recognised(store: GameStore) -> None:
    store._create = LostReply(store._create)
    store._commit = LostReply(store._commit)
    gid = new_id()
    assert store.create(gid, b"v1", [b"created"]) == 1
    assert store.commit(gid, 1, b"v2", [b"moved"], idempotency=("h", b"fp", b"answer")) == 2
    assert store.commit(gid, 2, b"v3", [b"moved again"]) == 3
    # Each write happened once, and answered as done (not as a conflict or a replay).
    assert store.load_game(gid) == (3, b"v3", None)
    assert store.events(gid, 0)[:2] == ([(1, b"created"), (2, b"moved"), (3, b"moved again")], 3)
    # Another write of the same version is still a conflict, another creation a clash.
    with pytest.raises(VersionConflict):
        store.commit(gid, 2, b"other")
    with pytest.raises(GameExists):
        store.create(gid, b"other")
    assert store.load_game(gid) == (3, b"v3", None)


def test_a_game_keeps_a_bounded_number_of_idempotency_records(
    store: GameStore, redis_client: redis.Redis
) -> None:
    """A client sending a new key with every move once stored a 2 KB answer per move
    for a day.  A game now keeps its last IDEMPOTENCY_RECORDS_PER_GAME: the newest
    keys still replay, the oldest are forgotten, and the storage stays bounded."""
    from service.store.game_store import IDEMPOTENCY_RECORDS_PER_GAME as KEPT

    gid = new_id()
    store.create(gid, b"v1")
    answer = b"a" * 2000
    for version in range(1, 3 * KEPT + 1):
        store.commit(gid, version, b"d", idempotency=(f"key{version}", b"fp", answer))
    stored = sum(
        redis_client.memory_usage(k, samples=0) or 0  # every field, not a sample
        for k in redis_client.scan_iter(match=f"t13:{{{gid}}}:*")
        if k not in (key(gid, "state").encode(), key(gid, "events").encode())
    )
    assert stored < KEPT * len(answer) * 1.5, stored  # 192 keys stored: 3x that
    newest = [f"key{v}" for v in range(2 * KEPT + 1, 3 * KEPT + 1)]
    assert all(store.load_with_idempotency(gid, k)[1][:2] == (b"fp", answer) for k in newest)
    assert store.load_with_idempotency(gid, "key1")[1] is None
    assert store.load_with_idempotency(gid, f"key{2 * KEPT}")[1] is None
