"""Reading a game's event stream: a page of the events a seat may see, or a long poll.

The stream (``t13:{id}:events``, see :mod:`service.store.game_store`) holds
every event of a game with entry id ``<seq>-0``; field ``seat`` says whose it
is ("" public, "N" private to seat N).  A reader sees the public events and
its own; the cursor it gets back counts the others' private events too, so
it never reads them again.  A reader waiting for the next events holds no
connection: it is woken by the game's publish (:mod:`service.store.wakeups`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from service.store import keys
from service.store.script_args import deadline_of
from service.store.store_errors import GameNotFound

MAX_EVENTS_PER_READ = 1000

Fetch = Callable[..., list[Any]]
"""Replies to read-only commands sent in one round trip (``GameStore._fetch``)."""


class Page(NamedTuple):
    """What one read of a game's events found."""

    events: list[tuple[int, bytes]]
    """``(seq, event JSON)`` pairs visible to the reader, oldest first."""
    cursor: int
    """The last seq examined (other seats' private events included): the next read's ``after``."""
    deadline: float | None
    """The current turn's deadline (Unix time), None if the game has none."""


def read_events(fetch: Fetch, game_id: str, after_seq: int, seat: int | None, limit: int) -> Page:
    """Events with seq > ``after_seq`` visible to ``seat`` (None: public only), oldest
    first, in one round trip.  An ``after_seq`` beyond the game's last seq is
    clamped to it; at most ``limit`` events are examined.  Raises
    :class:`GameNotFound`.
    """
    after = max(0, int(after_seq))
    (last, deadline), entries = fetch(
        ("HMGET", keys.key(game_id, keys.STATE), "s", "t"),
        ("XRANGE", keys.key(game_id, keys.EVENTS), f"{after + 1}-0", "+", "COUNT", limit),
    )
    if last is None:
        raise GameNotFound(game_id)
    found, cursor = _visible(entries or [], seat, min(after, int(last)))
    return Page(found, cursor, deadline_of(deadline))


def _visible(
    entries: Sequence[Any], seat: int | None, cursor: int
) -> tuple[list[tuple[int, bytes]], int]:
    """Filter XRANGE entries to ``seat``; returns them and the last seq examined.

    An entry is ``(id, {field: value})`` as redis-py parses it, or ``[id, [field,
    value, ...]]`` as it comes off the wire (:class:`~service.store.link.Link`).
    """
    wanted = b"" if seat is None else str(int(seat)).encode()
    found: list[tuple[int, bytes]] = []
    for entry_id, raw_fields in entries:
        fields = raw_fields if isinstance(raw_fields, dict) else _pairs(raw_fields)
        seq = int(entry_id.split(b"-", 1)[0])
        cursor = max(cursor, seq)
        owner = fields.get(b"seat", b"")
        if owner == b"" or owner == wanted:
            found.append((seq, fields[b"e"]))
    return found, cursor


def _pairs(flat: Sequence[bytes]) -> dict[bytes, bytes]:
    return dict(zip(flat[::2], flat[1::2], strict=True))
