"""Following a game: the long poll, Server-Sent Events and NDJSON, on one loop.

A follower holds no thread and no Redis connection while it waits: it
:meth:`~service.store.GameStore.watch` es its game (woken by each commit's
publish, see :mod:`service.store.wakeups`) and reads the new events when woken
(:func:`updates`).  The long poll answers the first events found, or none once
its ``wait`` is over; a stream sends each batch as it comes, a heartbeat when
quiet, and a last comment when the process stops.  A follower also plays its
game's overdue turn when the turn's deadline passes (as any request touching
the game does), so turn timers run while every client only listens.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import orjson
from flask import Response
from werkzeug.datastructures import MIMEAccept

from service.api.problems import ApiError
from service.logs import CURRENT_REQUEST
from service.store import GameNotFound, GameStore, StoreUnavailable
from service.store.budget import close_budget, extend, open_budget
from service.store.shutdown import shutting_down
from service.store.wakeups import Watch

log = logging.getLogger(__name__)

JSON = "application/json"
SSE = "text/event-stream"
NDJSON = "application/x-ndjson"
MEDIA_TYPES = (JSON, SSE, NDJSON)
"""What the events endpoint answers in, the first being the default (``*/*``, no Accept)."""

RETRY_MILLISECONDS = 2000
"""The reconnection delay an SSE stream asks of ``EventSource`` (its ``retry:`` field)."""

SETTLE_GRACE_SECONDS = 0.05
"""A follower plays an overdue turn this long after its deadline (clocks differ a little)."""

STOPPING = "server stopping; reconnect with Last-Event-ID"

Batch = tuple[list[tuple[int, bytes]], int]
"""``(events, cursor)``: ``(seq, event JSON)`` pairs (none: a quiet period passed) and
the cursor after them."""


def negotiate(accept: MIMEAccept) -> str:
    """The media type to answer in, from the request's ``Accept`` (406 if none fits;
    none sent: JSON)."""
    media = accept.best_match(MEDIA_TYPES) if accept.provided else JSON
    if media is None:
        raise ApiError(
            "NOT_ACCEPTABLE",
            f"the events are served as {', '.join(MEDIA_TYPES)}: accept one of them",
        )
    return media


def updates(
    store: GameStore,
    watch: Watch,
    game_id: str,
    seat: int | None,
    after: int,
    quiet_seconds: float,
    settle: Callable[[], None],
) -> Iterator[Batch]:
    """The events of ``game_id`` visible to ``seat`` after ``after``, batch by batch as
    they are committed, for as long as the caller takes them.

    ``watch`` must watch ``game_id`` already (it is read after, so nothing is
    missed).  Yields first what it reads at once (perhaps no events), then each
    batch as soon as it is published (read from the publish itself when it
    follows the cursor, else from the stream), and ``([], cursor)`` after each
    ``quiet_seconds`` without one; ends once the process is stopping.
    When the turn's deadline passes it calls ``settle`` (which plays the
    overdue turn: that commit wakes it).  Raises :class:`GameNotFound` and
    :class:`StoreUnavailable` from its reads.
    """
    page = store.events(game_id, after, seat)
    cursor, deadline = page.cursor, page.deadline
    yield page.events, cursor
    quiet_since = time.monotonic()
    while not shutting_down():
        wait = quiet_seconds - (time.monotonic() - quiet_since)
        if wait <= 0:
            yield [], cursor
            quiet_since = time.monotonic()
            continue
        overdue_in = None if deadline is None else deadline - time.time() + SETTLE_GRACE_SECONDS
        began = time.monotonic()
        woken = watch.wait(wait if overdue_in is None else min(wait, overdue_in))
        extend(time.monotonic() - began)  # waiting is not time lost to Redis
        if overdue_in is not None and time.monotonic() - began >= overdue_in:
            settle()  # its commit's publish wakes this watch (or another's does)
            deadline = None
        if not woken:
            continue
        page = watch.take(cursor, seat) or store.events(game_id, cursor, seat)
        cursor, deadline = page.cursor, page.deadline
        if page.events:
            yield page.events, cursor
            quiet_since = time.monotonic()


def settler(
    environ: dict[str, Any], play: Callable[[], Any], budget_seconds: float
) -> Callable[[], None]:
    """``play`` (which plays the game's overdue turn through the request's
    services) made callable while a stream is sent, after its request's
    handler returned: with the request current again and a Redis budget of its
    own.  Failures are the next follower's to retry; a stalled store ends the
    stream (the client reconnects)."""

    def settle() -> None:
        bound = CURRENT_REQUEST.set(environ)
        budget = open_budget(budget_seconds)
        try:
            play()
        except (GameNotFound, StoreUnavailable):
            raise
        except Exception as exc:  # a race lost to other writers, say: the next one plays it
            log.info("could not play the overdue turn while following: %s", exc)
        finally:
            close_budget(budget)
            CURRENT_REQUEST.reset(bound)

    return settle


def event_json(seq: int, raw: bytes) -> tuple[dict[str, Any], bytes]:
    """A stored event as it is sent: its fields with ``seq`` first; and its JSON text."""
    event = {"seq": seq, **orjson.loads(raw)}
    return event, orjson.dumps(event)


def sse_frames(batch: list[tuple[int, bytes]]) -> bytes:
    r"""Server-Sent Events frames for ``batch``.

    >>> sse_frames([(3, b'{"type":"drew","seat":1}')])
    b'id: 3\nevent: drew\ndata: {"seq":3,"type":"drew","seat":1}\n\n'
    """
    frames = []
    for seq, raw in batch:
        event, text = event_json(seq, raw)
        frames.append(b"id: %d\nevent: %s\ndata: %s\n\n" % (seq, event["type"].encode(), text))
    return b"".join(frames)


def ndjson_lines(batch: list[tuple[int, bytes]]) -> bytes:
    r"""NDJSON lines for ``batch``.

    >>> ndjson_lines([(3, b'{"type":"drew"}')])
    b'{"seq":3,"type":"drew"}\n'
    """
    return b"".join(event_json(seq, raw)[1] + b"\n" for seq, raw in batch)


class EventStream:
    """The body of a streamed answer: an iterable the server sends chunk by chunk,
    which releases the game's watch when the server closes it (also when it
    never started: a generator's ``finally`` would not run then)."""

    def __init__(self, chunks: Iterator[bytes], resources: ExitStack) -> None:
        self._chunks = chunks
        self._resources = resources

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    def close(self) -> None:
        try:
            close = getattr(self._chunks, "close", None)
            if close is not None:
                close()
        finally:
            self._resources.close()


def stream_response(
    media: str, first: list[tuple[int, bytes]], batches: Iterator[Batch], resources: ExitStack
) -> Response:
    """The streamed answer in ``media`` (SSE or NDJSON): the ``first`` events, then
    ``batches``, ending with a comment (SSE) when the process stops or the
    store fails.  Closing it closes ``resources``."""
    sse = media == SSE

    def chunks() -> Iterator[bytes]:
        opening = b"retry: %d\n\n" % RETRY_MILLISECONDS if sse else b"\n"
        yield opening + ((sse_frames(first) if sse else ndjson_lines(first)) if first else b"")
        ending = STOPPING
        try:
            for events, _cursor in batches:
                if events:
                    yield sse_frames(events) if sse else ndjson_lines(events)
                else:
                    yield b": keep-alive\n\n" if sse else b"\n"
        except GameNotFound:
            ending = "game not found"
        except StoreUnavailable:
            ending = "storage unavailable; reconnect with Last-Event-ID"
        if sse:
            yield b": %s\n\n" % ending.encode()

    response = Response(
        EventStream(chunks(), resources),
        content_type=media,
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        direct_passthrough=True,
    )
    return response
