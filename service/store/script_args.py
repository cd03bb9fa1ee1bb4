"""The KEYS and ARGV of the write scripts (:mod:`service.store.scripts`): the
events as stored, the idempotency record, the write id, the turn deadline."""

from __future__ import annotations

import random
from collections.abc import Sequence

from service.store import keys

StoredEvent = bytes | tuple[bytes, int | None]
"""An event as stored: its JSON bytes, public; or ``(json, seat)`` — private to
``seat`` unless None."""

IdempotencyRecord = tuple[str, bytes, bytes]
"""The idempotency record a write saves: ``(key hash, request fingerprint, answer)``."""

Deliveries = list[tuple[bytes, int, bytes]]
"""The webhook deliveries a write queues (:mod:`service.store.outbox`): ``(header,
index of the event among the write's, body)`` each -- the header JSON (game, URL,
secret, time; the app for an app's webhook), the body a JSON object to which the
script adds the event's ``seq``."""


def deadline_arg(deadline: float | None) -> str:
    return "" if deadline is None else repr(float(deadline))


def deadline_of(stored: bytes | None) -> float | None:
    """The turn deadline as :func:`deadline_arg` stored it (field ``t``)."""
    return float(stored) if stored else None


def new_write_id() -> str:
    """A fresh id for one write.  The scripts save it with the game, so a write
    that the client library re-sends after losing its reply (a timeout) is
    recognised as already done instead of reported as a conflict -- which
    would otherwise make the service apply a move twice, or answer a move it
    made as an idempotent replay of someone else's.

    Unique is all it must be, not secret: 64 bits from the process's own
    generator (seeded from the OS, and again in every forked worker), which
    spares a system call on every write."""
    return f"{random.getrandbits(64):016x}"


def _event_args(events: Sequence[StoredEvent], digests: Sequence[str]) -> list[bytes | str | int]:
    args: list[bytes | str | int] = [len(events)]
    for event, digest in zip(events, digests, strict=True):
        body, seat = (event, None) if isinstance(event, bytes) else event
        args += ["" if seat is None else str(int(seat)), body, digest]
    return args


def script_input(
    game_id: str,
    head: list[bytes | str | int],
    tail: list[bytes | str | int],
    events: Sequence[StoredEvent],
    digests: Sequence[str],
    idempotency: IdempotencyRecord | None,
    idempotency_ttl: int,
    *extra: int,
    deliveries: Deliveries | None = None,
    finished_ms: int | None = None,
) -> tuple[list[str], list[bytes | str | int]]:
    """KEYS and ARGV of a write script (see :mod:`service.store.scripts`): ``head``,
    a fresh write id, ``tail``, the game id and its hash slot (for its entry among
    the due games, :mod:`service.store.due_games`), and the events with their ``digests``
    (:func:`service.store.history.link`); with ``idempotency``, the game's
    idempotency keys and the record (fingerprint, response, its TTL, the key's
    hash, then ``extra``); last the webhook ``deliveries`` (with their slot's
    outbox as the last key) and their number; very last, when the write finishes the
    game (``finished_ms``; "" when it does not), for the slot's finished games
    (:mod:`service.store.archives`)."""
    slot = keys.slot_of(game_id)
    key_list = [
        keys.key(game_id, keys.STATE),
        keys.key(game_id, keys.EVENTS),
        keys.outbox_key(slot, keys.DUE),
        keys.outbox_key(slot, keys.FINISHED),
    ]
    args: list[bytes | str | int] = [
        *head,
        new_write_id(),
        *tail,
        game_id,
        slot,
        *_event_args(events, digests),
    ]
    if idempotency is not None:
        key_hash, fingerprint, response = idempotency
        key_list += [keys.key(game_id, keys.IDEM), keys.key(game_id, keys.IDEM_ORDER)]
        args += [fingerprint, response, idempotency_ttl, key_hash, *extra]
    if deliveries:
        key_list.append(keys.outbox_key(slot, keys.OUTBOX))
        args.append(slot)
        for header, index, body in deliveries:
            args += [index, header, body]
    args.append(len(deliveries) if deliveries else 0)
    args.append("" if finished_ms is None else int(finished_ms))
    return key_list, args
