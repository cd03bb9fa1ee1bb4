"""Reading a game's event stream: a page of the events a seat may see, or a long poll.

The stream (``t13:{id}:events``, see :mod:`service.store.game_store`) holds
every event of a game with entry id ``<seq>-0``; field ``seat`` says whose it
is ("" public, "N" private to seat N).  A reader sees the public events and
its own; the cursor it gets back counts the others' private events too, so
it never reads them again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from service.store import budget, keys
from service.store.client import RedisClient, translate_errors
from service.store.errors import GameNotFound
from service.store.shutdown import SHUTTING_DOWN

BLOCK_CHUNK_SECONDS = 1.0
"""A long poll blocks in chunks of this length (below the socket timeout); between
chunks it checks :data:`~service.store.shutdown.SHUTTING_DOWN`, so it ends within
about this long once the process is stopping."""

MAX_EVENTS_PER_READ = 1000


def read_events(
    client: RedisClient,
    game_id: str,
    after_seq: int = 0,
    seat: int | None = None,
    wait_seconds: float = 0.0,
    limit: int = MAX_EVENTS_PER_READ,
) -> tuple[list[tuple[int, bytes]], int]:
    """Events with seq > ``after_seq`` visible to ``seat`` (None: public only), oldest first.

    Returns ``(events, last_seq)`` where ``last_seq`` is the cursor for the
    next call: the last seq examined, including other seats' private events
    (an ``after_seq`` beyond the game's last seq is clamped to it).  At most
    ``limit`` events are examined per call.  If none is visible and
    ``wait_seconds`` > 0, waits (XREAD BLOCK, in short chunks) until one
    arrives or the time is up; it stops waiting early (answering what it has)
    once :func:`~service.store.shutdown.request_shutdown` was called.
    A stalled Redis costs it no more than the request's Redis budget
    (:mod:`service.store.budget`): each chunk's block time is added to it.
    Raises :class:`GameNotFound` (or :class:`StoreUnavailable`).
    """
    deadline = time.monotonic() + max(0.0, wait_seconds)
    state_key = keys.key(game_id, keys.STATE)
    events_key = keys.key(game_id, keys.EVENTS)
    after = max(0, int(after_seq))
    with translate_errors():
        pipe = client.pipeline(transaction=False)
        pipe.hget(state_key, "s")
        pipe.xrange(events_key, min=f"{after + 1}-0", max="+", count=limit)
        last, entries = pipe.execute()
    if last is None:
        raise GameNotFound(game_id)
    cursor = min(after, int(last))
    found, cursor = _visible(entries, seat, cursor)
    while not found and not SHUTTING_DOWN.is_set():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        block_ms = max(1, int(min(remaining, BLOCK_CHUNK_SECONDS) * 1000))
        budget.extend(block_ms / 1000)  # the block is not time lost to Redis
        with translate_errors():
            reply = client.xread({events_key: f"{cursor}-0"}, count=limit, block=block_ms)
        for _stream, stream_entries in _streams(reply):
            found, cursor = _visible(stream_entries, seat, cursor)
    return found, cursor


def _streams(reply: Any) -> list[tuple[Any, Any]]:
    """XREAD's reply as ``[(stream, entries)]`` (redis-py's default legacy shape)."""
    return [(name, entries) for name, entries in reply or []]


def _visible(
    entries: Sequence[tuple[bytes, dict[bytes, bytes]]], seat: int | None, cursor: int
) -> tuple[list[tuple[int, bytes]], int]:
    """Filter stream entries to ``seat``; returns them and the last seq examined."""
    wanted = b"" if seat is None else str(int(seat)).encode()
    found: list[tuple[int, bytes]] = []
    for entry_id, fields in entries:
        seq = int(entry_id.split(b"-", 1)[0])
        cursor = max(cursor, seq)
        owner = fields.get(b"seat", b"")
        if owner == b"" or owner == wanted:
            found.append((seq, fields[b"e"]))
    return found, cursor
