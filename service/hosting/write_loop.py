"""The one optimistic write loop every change of a game goes through.

A write is one read of the game (with the request's idempotency record, if it
sent a key, in the same round trip) and one atomic conditional store write
(:meth:`GameStore.commit`) of the new document, its events, what is saved
beside it (:mod:`service.hosting.snapshots`) and the deliveries to the game's
webhook (:mod:`service.hosting.game_webhooks`).  A write that loses a race is tried
again on the fresh state, unless the client sent ``If-Match``: then it is
answered 412.  Before its own change, every request that touches a game plays
the turn that is overdue there, if any (turn timers, bots left to play), and
saves it: that too is a write of this loop (:func:`optimistic_write`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from flask import Response

from service.api.conditional import if_match_version
from service.api.context import store
from service.api.idempotency import Idempotency, game_idempotency, replay
from service.api.problems import ApiError
from service.api.responses import json_response
from service.engine.game_events import Event
from service.hosting import game_views, game_webhooks, lobby_listing
from service.hosting.record import GameRecord
from service.hosting.snapshots import events_payload, snapshot, snapshot_with
from service.hosting.timers import apply_timeouts
from service.store import GameNotFound, IdempotentReplay, VersionConflict
from service.store.script_args import IdempotencyRecord

MAX_ATTEMPTS = 4
"""Tries of one write before it is answered 409 (a game changing that fast is rare:
its players take turns)."""

T = TypeVar("T")


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


@dataclass(frozen=True, slots=True)
class Write:
    """What one attempt of :func:`optimistic_write` saves: the events, what is
    saved beside the document (:func:`~service.hosting.snapshots.snapshot`) and the
    idempotency record of the request, if it sent a key."""

    events: list[Event]
    saved: dict[str, Any]
    idempotency: IdempotencyRecord | None = None


Step = Callable[[int, GameRecord], tuple[Write | None, T]]
"""``step(version, record)``: changes the record and says what to save (None:
nothing), and what the write gives its caller."""


def optimistic_write(
    game_id: str, step: Step[T], *, idem: Idempotency | None = None, expected: int | None = None
) -> T:
    """Load the game, play its overdue turn if any (once), run ``step`` and save
    what it changed if the game is still at the version it read; else start over.

    ``expected`` is the version ``If-Match`` named (412 when the game is at another).
    Raises :class:`GameNotFound`, and :class:`IdempotentReplay` when ``idem``'s key
    was used already (found on reading, or refused on writing)."""
    settled = False  # one stretch of overdue turns per request (bounded work)
    for _attempt in range(MAX_ATTEMPTS):
        version, record = _load(game_id, idem)
        if not settled:
            events = apply_timeouts(record, history=lambda: public_events(game_id))
            if events:
                settled = True
                try:
                    _commit(game_id, version, record, Write(events, snapshot(record, version + 1)))
                except VersionConflict:
                    pass  # someone else changed it (perhaps the same timeout): reload
                continue
        if expected is not None and expected != version:
            ahead = (
                ": the game lost changes you saw (its store failed over); reload it"
                if expected > version
                else ""
            )
            raise ApiError(
                "PRECONDITION_FAILED",
                f"If-Match names version {expected}, the game is at version {version}{ahead}",
                current_version=version,
            )
        write, result = step(version, record)
        if write is None:
            return result
        try:
            _commit(game_id, version, record, write)
        except VersionConflict as conflict:
            if expected is not None:
                raise ApiError(
                    "PRECONDITION_FAILED",
                    "the game changed while this move was being applied",
                    current_version=conflict.current_version,
                ) from None
            continue
        return result
    raise ApiError("CONFLICT", "the game is changing too fast; retry")


def _load(game_id: str, idem: Idempotency | None) -> tuple[int, GameRecord]:
    if idem is not None:
        found, earlier = store().load_with_idempotency(game_id, idem.key_hash)
        if earlier is not None:
            raise IdempotentReplay(*earlier)
    else:
        found = store().load_game(game_id)
    if found is None:
        raise GameNotFound(game_id)
    version, raw, results = found
    return version, GameRecord.loaded(raw, results)


def _commit(game_id: str, version: int, record: GameRecord, write: Write) -> None:
    lobby_listing.before_write(record)
    store().commit(
        game_id,
        version,
        record.to_bytes(),
        events_payload(write.events),
        idempotency=write.idempotency,
        deliveries=game_webhooks.deliveries(record, write.events),
        **write.saved,
    )
    lobby_listing.committed(record)


def change(
    game_id: str,
    operation: Callable[[int, GameRecord], ChangeOutcome],
    *,
    conditional: bool = False,
) -> Response:
    """A request's change of a game: ``operation(version, record)`` changes the
    record and says what to answer; saved by :func:`optimistic_write` with the
    request's idempotency record.  An operation that changes nothing (no
    events) saves nothing: it is answered at the version it read.  With
    ``conditional`` the request's ``If-Match`` is honoured (412 when stale)."""
    expected = if_match_version() if conditional else None
    idem = game_idempotency(game_id)

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
        outcome, status, text, new_version = optimistic_write(
            game_id, step, idem=idem, expected=expected
        )
    except IdempotentReplay as first:
        assert idem is not None
        return replay(idem, first.fingerprint, first.response)
    if outcome.committed is not None and outcome.changed:
        outcome.committed()
    return json_response(
        orjson.Fragment(text), status, version=new_version, headers=outcome.headers
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


def current(game_id: str) -> tuple[int, GameRecord]:
    """The game's version and record after any overdue turn was played, or 404."""
    return optimistic_write(game_id, lambda version, record: (None, (version, record)))


def create_game(
    record: GameRecord, events: list[Event], idempotency: IdempotencyRecord | None = None
) -> None:
    """Save a new game at version 1 with its first events (and the idempotency
    record of the request that made it).  Raises :class:`GameExists`, or
    :class:`IdempotentReplay` when it was made by a request with the same key."""
    lobby_listing.before_write(record)
    store().create(
        record.id,
        record.to_bytes(),
        events_payload(events),
        idempotency=idempotency,
        deliveries=game_webhooks.deliveries(record, events),
        **snapshot(record, 1),
    )


def public_events(game_id: str) -> list[dict[str, Any]]:
    """Every public event of a game (for bots that track the cards)."""
    return [orjson.loads(raw) for _seq, raw in store().all_events(game_id)]
