"""The one optimistic write loop every change of a game goes through.

A write is one read of the game (with the request's idempotency record, if it
sent a key, in the same round trip) and one atomic conditional store write
(:meth:`GameStore.commit`) of the new document, its events, what is saved
beside it (:mod:`service.hosting.snapshots`) and the deliveries to the game's
webhook (:mod:`service.hosting.game_webhooks`) and its app's
(:mod:`service.hosting.app_webhooks`).  A write that loses a race is
tried again on the fresh state, unless the caller named the version it expects
(``If-Match``, a version with the game's last event then): then it is refused
(:class:`VersionMismatchError`, or :class:`HistoryDivergedError` when that event
is not in the game's history).  A write changes only what its caller
asked: the turns that fall due (bots', turn timers') are played by the bot
workers, with a write of this loop of their own (:mod:`service.hosting.due_turns`).

Plain Python over a store: every function takes the :class:`GameStore` and the
:class:`Config` it works with (as rq takes ``connection=``), so a move can be
committed by a request, a worker, a command or a test alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from service.config import Config
from service.engine.game_events import Event
from service.hosting import (
    app_deliveries,
    app_games,
    app_listing,
    lobby_listing,
    webhook_deliveries,
)
from service.hosting.app_webhooks import hook_for_game
from service.hosting.record import GameRecord
from service.hosting.refusals import (
    ChangingTooFastError,
    HistoryDivergedError,
    VersionMismatchError,
)
from service.hosting.saved_answers import Idempotency
from service.hosting.snapshots import events_payload, snapshot
from service.store import GameNotFound, GameStore, IdempotentReplay, VersionConflict
from service.store.game_reads import LoadedGame, Written
from service.store.history import Position
from service.store.script_args import Deliveries, IdempotencyRecord

MAX_ATTEMPTS = 4
"""Tries of one write before it is refused as changing too fast (a game changing
that fast is rare: its players take turns)."""

T = TypeVar("T")

Precondition = tuple[int, Position | None]
"""What ``If-Match`` names: a version, and the game's last event then (None: a
bare version, taken on trust)."""


@dataclass(frozen=True, slots=True)
class Write:
    """What one attempt of :func:`optimistic_write` saves: the events, what is
    saved beside the document (:func:`~service.hosting.snapshots.snapshot`) and
    the idempotency record of the request, if it sent a key."""

    events: list[Event]
    saved: dict[str, Any]
    idempotency: IdempotencyRecord | None = None


Step = Callable[[int, GameRecord], tuple[Write | None, T]]
"""``step(version, record)``: changes the record and says what to save (None:
nothing), and what the write gives its caller."""


def optimistic_write(
    store: GameStore,
    config: Config,
    game_id: str,
    step: Step[T],
    *,
    idem: Idempotency | None = None,
    expected: Precondition | None = None,
    guard: Callable[[GameRecord], object] | None = None,
    first: LoadedGame | None = None,
) -> tuple[T, Position]:
    """Load the game, run ``step`` and save what it changed if the game is still
    at the version it read; else start over.
    Returns what ``step`` gave, and the game's last event after the write (or as
    read, when ``step`` saved nothing): what the version's ETag names.

    ``guard`` checks the record as read before anything else (who may change it: a
    refusal there is answered before a stale ``If-Match``).
    ``expected`` is the state the caller expects (``If-Match``):
    :class:`HistoryDivergedError` when the event it names is not in the game's
    history, :class:`VersionMismatchError` when the game is at another version.  Raises
    :class:`GameNotFound`, :class:`ChangingTooFastError` after
    :data:`MAX_ATTEMPTS` lost races, and :class:`IdempotentReplay` when
    ``idem``'s key was used already (found on reading, or refused on writing).

    ``first``: the game as the caller read it already for this write
    (:func:`~service.store.game_reads.game_read`, without ``idem``), which the first
    attempt takes in place of its read."""
    for _attempt in range(MAX_ATTEMPTS):
        if first is not None and idem is None:
            version, record, last = _loaded(first)
            first = None
        else:
            version, record, last = _load(store, game_id, idem)
        if guard is not None:
            guard(record)
        if expected is not None:
            _check(store, game_id, expected, version, last)
        write, result = step(version, record)
        if write is None:
            return result, last
        try:
            written = _commit(store, config, game_id, version, record, write)
        except VersionConflict as conflict:
            if expected is not None:
                raise VersionMismatchError(
                    "the game changed while this move was being applied",
                    current_version=conflict.current_version,
                ) from None
            continue
        return result, written.last
    raise ChangingTooFastError("the game is changing too fast; retry")


def _check(
    store: GameStore, game_id: str, expected: Precondition, version: int, last: Position
) -> None:
    """Refuse unless the game is at the state ``If-Match`` named:
    :class:`HistoryDivergedError` when the event it names is not in the game's
    history (the store lost changes the client saw: it must read the game again,
    from the shared point), else :class:`VersionMismatchError` when the version
    is another."""
    named_version, named_last = expected
    if named_last is not None and named_last != last:
        reset = store.history(game_id, named_last, limit=0).reset
        if reset is not None:
            raise HistoryDivergedError(
                f"If-Match names event {named_last.seq} of a history the game no longer "
                "has (its store lost changes you saw): read it again",
                current_version=version,
                shared=reset,
            )
    if named_version != version:
        ahead = (
            ": the game lost changes you saw (its store failed over); reload it"
            if named_version > version
            else ""
        )
        raise VersionMismatchError(
            f"If-Match names version {named_version}, the game is at version {version}{ahead}",
            current_version=version,
        )


def _load(
    store: GameStore, game_id: str, idem: Idempotency | None
) -> tuple[int, GameRecord, Position]:
    if idem is not None:
        found, earlier = store.load_with_idempotency(game_id, idem.key_hash)
        if earlier is not None:
            raise IdempotentReplay(*earlier)
    else:
        found = store.load_game(game_id)
    if found is None:
        raise GameNotFound(game_id)
    return _loaded(found)


def _loaded(found: LoadedGame) -> tuple[int, GameRecord, Position]:
    version, raw, results = found
    return version, GameRecord.loaded(raw, results), found.last


def _commit(
    store: GameStore, config: Config, game_id: str, version: int, record: GameRecord, write: Write
) -> Written:
    lobby_listing.before_write(store, config, record)
    written = store.commit(
        game_id,
        version,
        record.to_bytes(),
        events_payload(write.events),
        idempotency=write.idempotency,
        deliveries=_deliveries(store, record, write.events),
        finished_ms=finishing(record),
        **write.saved,
    )
    lobby_listing.committed(store, config, record)
    app_games.ended(store, record)
    return written


def finishing(record: GameRecord) -> int | None:
    """When (Unix ms, now) the write of ``record`` finishes its game -- it was read
    not finished and is finished now -- else None: the write then queues the game for
    its archive (:mod:`service.hosting.archiving`), in its own script."""
    if record.status == "finished" and record.loaded_status != "finished":
        return int(time.time() * 1000)
    return None


def _deliveries(store: GameStore, record: GameRecord, events: list[Event]) -> Deliveries:
    """What a write sends to the game's webhook and to its app's, if they have one."""
    out = webhook_deliveries.deliveries(record, events)
    found = hook_for_game(store.apps, record.id)
    if found is not None:
        app_id, hook = found

        def live(seat: int) -> bool:
            return store.live_streams(record.id, seat) > 0

        out += app_deliveries.deliveries(record, events, app_id, hook, live)
    return out


def current(store: GameStore, config: Config, game_id: str) -> tuple[int, GameRecord, Position]:
    """The game's version, record and last event, as stored (:class:`GameNotFound`
    without one): a read, which plays nothing."""
    return _load(store, game_id, None)


def create_game(
    store: GameStore,
    config: Config,
    record: GameRecord,
    events: list[Event],
    idempotency: IdempotencyRecord | None = None,
) -> Written:
    """Save a new game at version 1 with its first events (and the idempotency
    record of the request that made it), then add it to its app's index
    (:mod:`service.hosting.app_listing`).  Raises :class:`GameExists`, or
    :class:`IdempotentReplay` when it was made by a request with the same key.
    Returns its version, 1, with its last event.  A game of an app is counted
    against its concurrent-games limit first (:class:`AppLimitError` at the limit)."""
    app_games.take(store, config, record)
    lobby_listing.before_write(store, config, record)
    written = store.create(
        record.id,
        record.to_bytes(),
        events_payload(events),
        idempotency=idempotency,
        deliveries=_deliveries(store, record, events),
        **snapshot(record, 1),
    )
    app_listing.note(store, record)
    return written


def public_events(store: GameStore, game_id: str) -> list[dict[str, Any]]:
    """Every public event of a game (for bots that track the cards)."""
    return [orjson.loads(raw) for _seq, raw in store.all_events(game_id)]
