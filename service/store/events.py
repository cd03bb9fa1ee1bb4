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
from service.store.divergence import shared_point
from service.store.history import START, Position
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

    An entry is ``(id, {field: value})`` as redis-py parses it.
    """
    wanted = b"" if seat is None else str(int(seat)).encode()
    found: list[tuple[int, bytes]] = []
    for entry_id, fields in entries:
        seq = int(entry_id.split(b"-", 1)[0])
        cursor = max(cursor, seq)
        owner = fields.get(b"seat", b"")
        if owner == b"" or owner == wanted:
            found.append((seq, fields[b"e"]))
    return found, cursor


class HistoryPage(NamedTuple):
    """What one read of a game's events from a client's position found, with the
    tags that make their ids (:mod:`service.store.history`)."""

    events: list[tuple[int, str, bytes]]
    """``(seq, tag, event JSON)`` visible to the reader, oldest first."""
    cursor: Position
    """The last point examined (other seats' private events included): the next read's."""
    deadline: float | None
    """The current turn's deadline (Unix time), None if the game has none."""
    reset: Position | None = None
    """None if the reader's position is in the game's history; else the last point
    both histories surely share (:func:`service.store.divergence.shared_point`):
    the events are those after it."""


def read_history(
    fetch: Fetch, game_id: str, after: Position, seat: int | None, limit: int
) -> HistoryPage:
    """Events after ``after`` visible to ``seat`` (None: public only), oldest first,
    at most ``limit`` examined: one round trip when ``after`` is in the game's
    history (its event is read with them, to compare its tag), one more when it
    is not (every tag is read, to find the point both share).  A bare seq (no
    tag) is taken on trust, clamped to the game's last seq.  Raises
    :class:`GameNotFound`."""
    seq = max(0, after.seq)
    (last, deadline, last_tag), entries = fetch(
        ("HMGET", keys.key(game_id, keys.STATE), "s", "t", "g"),
        ("XRANGE", keys.key(game_id, keys.EVENTS), f"{max(seq, 1)}-0", "+", "COUNT", limit + 1),
    )
    if last is None:
        raise GameNotFound(game_id)
    rows = [_row(entry) for entry in entries or []]
    if seq == 0:
        cursor = Position(0, START)
    elif rows and rows[0][0] == seq and (after.tag is None or rows[0][1] == after.tag):
        cursor = Position(seq, rows[0][1])
        rows = rows[1:]
    elif after.tag is None:  # a bare seq past the end (streams are never trimmed): clamped
        cursor = Position(int(last), (last_tag or b"").decode())
    else:
        return _diverged(fetch, game_id, Position(seq, after.tag), seat, limit, deadline)
    return _page(rows[:limit], seat, cursor, deadline_of(deadline))


def _diverged(
    fetch: Fetch, game_id: str, after: Position, seat: int | None, limit: int, deadline: Any
) -> HistoryPage:
    """The page after the last point the game's history shares with ``after``'s."""
    [entries] = fetch(("XRANGE", keys.key(game_id, keys.EVENTS), "-", "+"))
    rows = [_row(entry) for entry in entries or []]
    assert after.tag is not None
    shared = shared_point([tag for _seq, tag, _seat, _event in rows], after.seq, after.tag)
    point = Position(shared, rows[shared - 1][1] if shared else START)
    page = _page(rows[shared : shared + limit], seat, point, deadline_of(deadline))
    return page._replace(reset=point)


def _page(
    rows: list[tuple[int, str, bytes, bytes]], seat: int | None, cursor: Position, deadline: Any
) -> HistoryPage:
    wanted = b"" if seat is None else str(int(seat)).encode()
    found = [(seq, tag, event) for seq, tag, owner, event in rows if owner in (b"", wanted)]
    if rows:
        cursor = Position(rows[-1][0], rows[-1][1])
    return HistoryPage(found, cursor, deadline)


def _row(entry: Any) -> tuple[int, str, bytes, bytes]:
    """``(seq, tag, seat, event JSON)`` of an XRANGE entry (see :func:`_visible`)."""
    entry_id, fields = entry
    return (
        int(entry_id.split(b"-", 1)[0]),
        fields.get(b"g", b"").decode(),
        fields.get(b"seat", b""),
        fields[b"e"],
    )
