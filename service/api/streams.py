"""Following a game: the long poll, Server-Sent Events and NDJSON, on one loop.

A follower holds no thread and no Redis connection while it waits: it
:meth:`~service.store.GameStore.watch` es its game (woken by each commit's
publish, see :mod:`service.store.wakeups`) and reads the new events when woken
(:class:`Follower`).  The long poll answers the first events found, or none once
its ``wait`` is over; a stream sends each batch as it comes, a heartbeat when
quiet, and a last comment when the process stops.  A follower plays nothing:
the turns that fall due (bots', turn timers') are played by the bot workers
(:mod:`service.botplay`), whose writes wake it like any other.
"""

from __future__ import annotations

import logging
import time

import orjson
from flask import Response

from service.api import handlers, metrics, presence
from service.api.context import CURRENT_CALL, call
from service.api.event_frames import (
    RETRY_MILLISECONDS,
    SSE,
    Tagged,
    ndjson_lines,
    ndjson_reset,
    sse_frames,
    sse_reset,
)
from service.logs import CURRENT_REQUEST
from service.store import GameNotFound, StoreUnavailable
from service.store.budget import close_budget, extend, open_budget
from service.store.events import MAX_EVENTS_PER_READ, HistoryPage
from service.store.history import Position
from service.store.shutdown import shutting_down
from service.store.stream_leases import Lease
from service.store.wakeups import Watch

log = logging.getLogger(__name__)

STOPPING = "server stopping; reconnect with Last-Event-ID"

PAGE_EVENTS = MAX_EVENTS_PER_READ
"""Events a follower reads in one round trip; a stream further behind reads again at
once (seqs are consecutive, so a read that examined this many may have left more)."""


class Follower:
    """A client following ``game_id``'s events visible to ``seat`` from ``after``: a
    long poll waiting for its next batch, or a stream (SSE, NDJSON) sent chunk
    by chunk as the server iterates it.

    Made, it watches the game (woken by each commit's publish, see
    :mod:`service.store.wakeups`) and is counted in the followers gauge;
    :meth:`close` ends both (the server calls it once a stream is sent, or its
    client gone).  :meth:`read` reads what is there now; :meth:`next_batch`
    waits for more.

    One slotted object for the whole wait, iterated by the server itself (no
    generator, closure or context manager): thousands wait in a process, and
    every full garbage collection walks what each of them holds.
    """

    __slots__ = (
        "_watch",
        "_game_id",
        "_seat",
        "_media",
        "_call",
        "_began",
        "_first",
        "_ending",
        "_behind",
        "_holder",
        "_ticket",
        "_renew_at",
        "_lease",
        "_reset",
        "cursor",
    )

    def __init__(
        self,
        game_id: str,
        proof: Proof | None,
        after: Position,
        media: str,
        ticket: str | None = None,
    ) -> None:
        self._call = call()
        self._game_id = game_id
        # the seat and its holder's token hash, while that token holds the seat
        self._seat: int | None = None if proof is None else proof[0]
        self._holder: str | None = None if proof is None else proof[1]
        self._media = media
        self._ticket = ticket  # renewed while its stream is open: see _keep_ticket
        self._renew_at = time.monotonic() + self._call.services.config.stream_ticket_seconds / 2
        self._first: list[Tagged] | None = None
        self._ending: bytes | None = None
        self._behind = False
        self.cursor = after
        self._reset: Position | None = None  # see take_reset
        self._lease: Lease | None = None  # see hold
        # before any read: none missed; None once closed
        self._watch: Watch | None = self._call.services.store.watch(game_id)
        self._began = metrics.follow_began(self._call.environ, media)

    def close(self) -> None:
        """Stop watching and counting, and give its lease back (again: nothing)."""
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()
            metrics.follow_ended(self._media, self._began)
        lease, self._lease = self._lease, None
        if lease is not None:
            lease.release()

    def hold(self, wait: float | None) -> None:
        """Count this follower among its client's open streams -- its address's and
        its seat's (:mod:`service.api.stream_caps`) -- as a stream (``wait`` None:
        until it is closed) or as a long poll about to wait ``wait`` seconds.
        Raises :class:`~service.store.store_errors.TooManyStreams` (429) over a cap."""
        caps = self._call.services.stream_caps
        if caps is not None and self._lease is None:
            self._lease = caps.take(
                self._call.services.store, self._call.environ, self._game_id, self._seat, wait
            )

    def read(self) -> list[Tagged]:
        """The events there are now after the cursor, a page at most (the cursor
        advanced past them).  Raises :class:`GameNotFound` and
        :class:`StoreUnavailable`."""
        return self._advance(
            self._call.services.store.history(
                self._game_id, self.cursor, self._seat, limit=PAGE_EVENTS
            )
        )

    def next_batch(self, seconds: float) -> list[Tagged] | None:
        """The next events: at once while the last read left more, else as soon as
        they are committed (read from their publish when it follows the cursor,
        else from the stream); none once ``seconds`` pass without any, or at once
        when the game's history turned out to be another (:meth:`take_reset`);
        None once the process is stopping.  Raises :class:`GameNotFound` and
        :class:`StoreUnavailable` from its reads."""
        watch = self._watch
        assert watch is not None, "a closed follower"
        until = time.monotonic() + seconds
        while not shutting_down():
            if self._behind:
                events = self.read()
                if events or self._reset is not None:
                    return events
                continue
            wait = until - time.monotonic()
            if wait <= 0:
                return []
            began = time.monotonic()
            woken = watch.wait(wait)
            extend(time.monotonic() - began)  # waiting is not time lost to Redis
            if not woken:
                continue
            published = watch.take(self.cursor.seq, self._seat, self.cursor.tag)
            events = self._advance(published) if published is not None else self.read()
            if events or self._reset is not None:  # a reset is news, even with no events
                return events
        return None

    def take_reset(self) -> Position | None:
        """The last point shared with the history the follower followed, if the
        game's history turned out to be another since the last call (the events
        read since are those after it); else None."""
        reset, self._reset = self._reset, None
        return reset

    def _advance(self, page: HistoryPage) -> list[Tagged]:
        """Move past ``page``: its cursor is the follower's now; its
        events are those the follower may see (:meth:`_while_held`)."""
        if page.reset is not None:
            self._reset = page.reset
        start = self.cursor if page.reset is None else page.reset
        self._behind = page.cursor.seq - start.seq >= PAGE_EVENTS
        self.cursor = page.cursor
        if self._holder is None or left_at(page.events, self._seat) is None:
            return page.events
        return self._while_held(page.events)

    def _while_held(self, events: list[Tagged]) -> list[Tagged]:
        """``events``, which hold a ``player_left`` of the follower's seat: all of
        them if the token it was proven with holds the seat still (another
        player left it before); else the follower stops seeing the seat's private
        events from that one on (the token is void, the seat maybe someone
        else's since), as a spectator.  Asked with the request current again
        and a Redis budget of its own (a stream is sent after its handler
        returned)."""
        assert self._seat is not None and self._holder is not None
        bound = CURRENT_REQUEST.set(self._call.environ)
        bound_call = CURRENT_CALL.set(self._call)
        budget = open_budget(self._call.services.config.redis_timeout_seconds)
        try:
            events, held = while_held(self._game_id, events, self._seat, self._holder)
        finally:
            close_budget(budget)
            CURRENT_CALL.reset(bound_call)
            CURRENT_REQUEST.reset(bound)
        if not held:
            self._seat = self._holder = self._ticket = None
            if self._lease is not None:  # a spectator's now: the seat's place is free
                self._lease.release("seat")
        return events

    def stream(self, first: list[Tagged]) -> Response:
        """The streamed answer in this follower's media (SSE or NDJSON): the
        ``first`` events, then each batch as it comes, a heartbeat each
        ``SSE_HEARTBEAT_SECONDS`` without one, and (SSE) a last comment when the
        process stops or the store fails.  The server closes it when done."""
        self._first = first
        return Response(
            self,
            content_type=self._media,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            direct_passthrough=True,
        )

    def __iter__(self) -> Follower:
        return self

    def __next__(self) -> bytes:
        sse = self._media == SSE
        first = self._first
        if first is not None:
            self._first = None
            opening = b"retry: %d\n\n" % RETRY_MILLISECONDS if sse else b"\n"
            return opening + self._frames(first)
        if self._ending is not None:
            raise StopIteration
        ending = STOPPING
        try:
            events = self.next_batch(self._call.services.config.sse_heartbeat_seconds)
            if self._ticket is not None:
                self._keep_ticket()
            if self._lease is not None:
                self._lease.keep()
            if self._holder is not None:
                self._note_life()
            if events or self._reset is not None:
                return self._frames(events or [])
            if events is not None:
                return b": keep-alive\n\n" if sse else b"\n"
        except GameNotFound:
            ending = "game not found"
        except StoreUnavailable:
            ending = "storage unavailable; reconnect with Last-Event-ID"
        self._ending = b": %s\n\n" % ending.encode()
        if sse:
            return self._ending
        raise StopIteration

    def _frames(self, events: list[Tagged]) -> bytes:
        """``events`` in the stream's media, after a reset frame (a line in NDJSON)
        when the game's history turned out to be another (:meth:`take_reset`)."""
        sse = self._media == SSE
        reset = self.take_reset()
        head = b"" if reset is None else (sse_reset(reset) if sse else ndjson_reset(reset))
        return head + (sse_frames(events) if sse else ndjson_lines(events))

    def _note_life(self) -> None:
        """A seat's open stream is a sign of life of its player: tell the lobby (at
        most every so often: :func:`service.api.presence.note`), within a Redis
        budget of its own."""
        assert self._holder is not None
        services = self._call.services
        budget = open_budget(services.config.redis_timeout_seconds)
        try:
            spot = presence.of_store(services, self._game_id)
            presence.note(services, self._game_id, self._holder, spot)
        finally:
            close_budget(budget)

    def _keep_ticket(self) -> None:
        """Renew the stream ticket this stream was opened with, at the first
        heartbeat past half its life (``STREAM_TICKET_SECONDS`` is at least two
        heartbeats): a ticket stays valid while a stream it opened is open, and
        for half its life or more after, so that the browser's own reconnect
        (the same URL, after an instance stopped or the network broke) is let in
        however long the stream lasted."""
        now = time.monotonic()
        if now < self._renew_at or self._ticket is None:
            return
        seconds = self._call.services.config.stream_ticket_seconds
        self._call.services.store.renew_ticket(self._game_id, self._ticket, seconds)
        self._renew_at = now + seconds / 2


Proof = tuple[int, str]
"""What proved a follower's seat: the seat, and the hash of the token that holds it."""


def left_at(events: list[Tagged], seat: int | None) -> int | None:
    """The index in ``events`` of the first ``player_left`` of ``seat``, if any.

    >>> left_at([(4, "", b'{"type":"player_left","seat":2}'), (5, "", b'{"type":"drew"}')], 2)
    0
    >>> left_at([(4, "", b'{"type":"player_left","seat":2}')], 1), left_at([], None)
    (None, None)
    """
    if seat is None:
        return None
    for index, (_seq, _tag, raw) in enumerate(events):
        if b'"player_left"' in raw and orjson.loads(raw).get("seat") == seat:
            return index
    return None


def while_held(
    game_id: str, events: list[Tagged], seat: int, holder: str
) -> tuple[list[Tagged], bool]:
    """``events`` (those visible to ``seat``) as the token whose hash is ``holder``
    may see them, and whether it holds ``seat`` still: all of them while it does;
    once it does not, the seat's private events after its first ``player_left``
    dropped (a seat changes hands only through its holder leaving, which voids
    the token).  A failure to tell counts as not holding it (the client may
    reconnect and prove its seat again); a missing game or store is raised."""
    at = left_at(events, seat)
    if at is None:
        return events, True
    try:
        held = handlers.seat_held_by(game_id, holder) == seat
    except (GameNotFound, StoreUnavailable):
        raise
    except Exception as exc:  # a refusal of the record read, say
        log.info("could not tell whether a follower's seat is still held: %s", exc)
        held = False
    if held:
        return events, True
    return events[: at + 1] + [e for e in events[at + 1 :] if not _private(e[2])], False


def _private(raw: bytes) -> bool:
    return bool(orjson.loads(raw).get("private"))
