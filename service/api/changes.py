"""A request's change of a game: the write loop (:mod:`service.hosting.write_loop`)
called with the app's store and config and the request's ``If-Match`` and
``Idempotency-Key``, and its answer serialized.

The functions at the end bind the write loop to the app's store and config for
the handlers (the loop itself takes them as parameters).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from flask import Response

from service.api.conditional import if_match
from service.api.context import call, services, store
from service.api.etags import etag
from service.api.idempotency import game_idempotency, replay
from service.api.responses import json_response
from service.engine.game_events import Event
from service.hosting import game_views, write_loop
from service.hosting.record import GameRecord
from service.hosting.snapshots import snapshot_with
from service.hosting.write_loop import Write
from service.store import IdempotentReplay
from service.store.game_reads import game_read
from service.store.history import Position


@dataclass(frozen=True, slots=True)
class ChangeOutcome:
    """What an operation on a game produced: the events, and the answer to give,
    which is either ``seat``'s view at the new version or what ``build`` makes."""

    events: list[Event]
    build: Callable[[int], tuple[int, Any]] | None = None  # new version -> (status, body)
    headers: dict[str, str] | None = None
    seat: int | None = None  # answer 200 with this seat's view (when build is None)
    committed: Callable[[], None] | None = None
    """Called once the change is saved (not for an attempt lost to a race and
    retried): what must count only changes that happened, such as metrics."""

    @property
    def changed(self) -> bool:
        """Whether there is anything to save: an operation that leaves the game as
        it was (autopilot asked for at the level it plays, a rename to the same
        name) has no events, and is answered at the current version, unsaved."""
        return bool(self.events)


def change(
    game_id: str,
    operation: Callable[[int, GameRecord], ChangeOutcome],
    *,
    conditional: bool = False,
    guard: Callable[[GameRecord], object] | None = None,
) -> Response:
    """A request's change of a game: ``operation(version, record)`` changes the
    record and says what to answer; saved by the write loop with the
    request's idempotency record.  An operation that changes nothing (no
    events) saves nothing: it is answered at the version it read.  With
    ``conditional`` the request's ``If-Match`` is honoured (412 when stale), after
    ``guard`` (who may change the game: a refused credential is answered 401, not
    412).  The game read already for the request (a player's credential checked
    with it: :attr:`~service.api.context.Call.first_read`) is the first attempt's."""
    expected = if_match() if conditional else None
    idem = game_idempotency(game_id)
    read_already = None if idem is not None else call().prefetched_read(game_read(game_id))

    def step(
        version: int, record: GameRecord
    ) -> tuple[Write | None, tuple[ChangeOutcome, int, bytes, int]]:
        outcome = operation(version, record)
        if not outcome.changed:  # nothing appended, nobody woken, no record kept
            status, _body, _public, text, _parts = _answer_texts(record, outcome, version)
            return None, (outcome, status, text, version)
        new_version = version + 1
        status, body, public, text, seat_parts = _answer_texts(record, outcome, new_version)
        saved = None if idem is None else idem.record(status, body, new_version)
        write = Write(outcome.events, snapshot_with(record, public, seat_parts), saved)
        return write, (outcome, status, text, new_version)

    try:
        (outcome, status, text, new_version), last = write_loop.optimistic_write(
            store(),
            services().config,
            game_id,
            step,
            idem=idem,
            expected=expected,
            guard=guard,
            first=read_already,
        )
    except IdempotentReplay as first:
        assert idem is not None
        return replay(idem, first.fingerprint, first.response, first.last)
    if outcome.committed is not None and outcome.changed:
        outcome.committed()
    return json_response(
        orjson.Fragment(text), status, etag=etag(new_version, last), headers=outcome.headers
    )


def _answer_texts(
    record: GameRecord, outcome: ChangeOutcome, version: int
) -> tuple[int, Any, bytes, bytes, bytes]:
    """``(status, body, public view, answer text, seat parts)`` of an outcome at
    ``version``.

    A seat's view is built with the public view and the seats' parts in one pass
    (:func:`~service.hosting.game_views.move_texts`); its body is then the JSON
    text itself."""
    if outcome.build is None:
        assert outcome.seat is not None
        public, text, seat_parts = game_views.move_texts(record, version, outcome.seat)
        return 200, orjson.Fragment(text), public, text, seat_parts
    status, body = outcome.build(version)
    seat_parts = game_views.seat_parts_json(record, version)
    return status, body, game_views.public_json(record, version), orjson.dumps(body), seat_parts


def current(game_id: str) -> tuple[int, GameRecord, Position]:
    """:func:`service.hosting.write_loop.current` on the app's store."""
    return write_loop.current(store(), services().config, game_id)


def public_events(game_id: str) -> list[dict[str, Any]]:
    """:func:`service.hosting.write_loop.public_events` on the app's store."""
    return write_loop.public_events(store(), game_id)
