"""GameStore.history on a real Redis: events read with their tags from a client's
position, and a position the game's history no longer holds answered with a reset.

A rollback here is an older DUMP of the game's keys RESTOREd into the running
server (the same run: the same epoch): once that epoch writes other events
under the client's seqs, the store cannot vouch for any point, and the shared
point is 0.  A rollback across a restart (a new epoch, where the
shared point is found) is tests/realtime/test_rollback.py's."""

from __future__ import annotations

import redis

from service.store import GameStore
from service.store.history import Position, event_id
from service.store.keys import EVENTS, STATE, key
from tests.store.games import new_id


def _restore(client: redis.Redis, gid: str, dumps: dict[str, bytes]) -> None:
    for name, dumped in dumps.items():
        client.restore(name, 0, dumped, replace=True)


def test_events_come_with_tags_and_a_cursor_that_names_them(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"created", (b"hand0", 0), (b"hand1", 1)])
    store.commit(gid, 1, b"d", [b"drew"])
    page = store.history(gid, Position(0, None), seat=1)
    assert [(seq, event) for seq, _tag, event in page.events] == [
        (1, b"created"),
        (3, b"hand1"),
        (4, b"drew"),
    ]
    tags = [tag for _seq, tag, _event in page.events]
    assert all(len(tag) == 16 for tag in tags) and len(set(tags)) == 3
    assert page.cursor == Position(4, tags[-1]) and page.reset is None
    # from a tagged position in the history: on from there; the private event of
    # seat 0 (seq 2) is passed over, its tag known from the stream
    after_first = store.history(gid, Position(1, tags[0]), seat=1)
    assert [seq for seq, _tag, _event in after_first.events] == [3, 4]
    assert after_first.reset is None
    # a cursor at another seat's private event names it with its own tag
    at_two = store.history(gid, Position(0, None), seat=1, limit=2)
    assert at_two.cursor.seq == 2 and at_two.cursor.tag not in tags
    assert store.history(gid, at_two.cursor, seat=1).reset is None
    # nothing new after the last event: the same cursor back
    assert store.history(gid, page.cursor, seat=1) == (
        [],
        page.cursor,
        None,
        None,
    )


def test_a_bare_seq_is_taken_on_trust_and_clamped(store: GameStore) -> None:
    gid = new_id()
    store.create(gid, b"d", [b"a", b"b"])
    page = store.history(gid, Position(99, None))
    assert page.events == [] and page.cursor.seq == 2 and page.reset is None
    assert store.history(gid, Position(1, None)).events[0][::2] == (2, b"b")


def test_a_position_of_a_lost_history_is_reset(store: GameStore, redis_client: redis.Redis) -> None:
    gid = new_id()
    names = [key(gid, STATE), key(gid, EVENTS)]
    store.create(gid, b"d", [b"a", b"b"])
    older = {name: redis_client.dump(name) for name in names}
    store.commit(gid, 1, b"d", [b"lost move"])
    kept = store.history(gid, Position(0, None)).events[:2]
    seen = store.history(gid, Position(0, None)).cursor
    assert seen.seq == 3
    _restore(redis_client, gid, older)  # in the running server: the same epoch
    # what the epoch's history holds, before the client's event, it wrote before it
    told = store.history(gid, seen)
    assert told.reset == Position(2, kept[1][1]) and told.events == []
    store.commit(gid, 1, b"d", [b"another move", b"more"])
    # now the epoch wrote another event under the client's seq: nothing is vouched for
    told = store.history(gid, seen)
    assert told.reset == Position(0, "")
    assert [event for _seq, _tag, event in told.events] == [b"a", b"b", b"another move", b"more"]
    # the ids before the lost move are still the game's
    first = store.history(gid, Position(0, None)).events
    assert event_id(first[1][0], first[1][1]) == f"2.{first[1][1]}"
    assert store.history(gid, Position(2, first[1][1])).reset is None


def test_the_embedded_store_tags_events_with_its_constant_epoch() -> None:
    import fakeredis

    store = GameStore(fakeredis.FakeRedis())
    store.create("g", b"d", [b"a"])
    store.commit("g", 1, b"d", [b"b"])
    page = store.history("g", Position(0, None))
    assert [tag[8:] for _seq, tag, _event in page.events] == ["00000000", "00000000"]
    assert store.history("g", Position(1, page.events[0][1])).events[0][::2] == (2, b"b")
