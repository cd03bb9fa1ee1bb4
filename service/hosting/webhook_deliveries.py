"""What a write of a game sends to its webhook (:mod:`service.hosting.game_webhooks`):
one body per event the webhook wants, made from the write's events and the record
after it.  The store queues them in the same atomic script as the write
(:mod:`service.store.outbox`).  No body carries a token, a hand or anything private
to a seat."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson

from service.engine.game_events import Event
from service.hosting.game_webhooks import HookEvent, delivery_id
from service.hosting.record import GameRecord


def deliveries(
    record: GameRecord, events: Sequence[Event], now: float | None = None
) -> tuple[bytes, list[tuple[int, bytes]]] | None:
    """What a write of ``record`` with ``events`` sends to the game's webhook: the
    deliveries' header (game, URL, secret, time in ms) and ``(index of the event,
    body)`` for each event the webhook wants; None when there is none.  The store
    adds the event's ``seq`` to each body."""
    hook = record.webhook
    if hook is None:
        return None
    now = time.time() if now is None else now
    stamp = datetime.fromtimestamp(now, UTC).isoformat(timespec="milliseconds")
    last_turn = max((i for i, e in enumerate(events) if _turn_seat(e) is not None), default=-1)
    round_number = _round_before(record, events)
    bodies = []
    for index, event in enumerate(events):
        if event.type == "round_started":
            round_number = int(event.data["round"])
        found = _hook_event(record, event, round_number, index == last_turn)
        if found is not None and found[0] in hook.events:
            kind, data = found
            body = {
                "id": delivery_id(),
                "type": kind,
                "timestamp": stamp,
                "game_id": record.id,
                "data": data,
            }
            bodies.append((index, orjson.dumps(body)))
    if not bodies:
        return None
    header = orjson.dumps({"g": record.id, "u": hook.url, "k": hook.secret, "t": int(now * 1000)})
    return header, bodies


def _round_before(record: GameRecord, events: Sequence[Event]) -> int | None:
    """The number of the round in play before ``events``: one before the first
    round they start, else the record's round now."""
    for event in events:
        if event.type == "round_started":
            return int(event.data["round"]) - 1
    state = record.state
    return None if state is None or state.round is None else state.spec.number


def _turn_seat(event: Event) -> int | None:
    if event.type == "turn":
        return int(event.data["seat"])
    return None


def _hook_event(
    record: GameRecord, event: Event, round_number: int | None, last_turn: bool
) -> tuple[str, dict[str, Any]] | None:
    """The webhook event of an engine event, if it makes one.  A turn is told for a
    human seat only; its deadline is the record's when it is the write's last turn
    (an earlier one was played in the same write)."""
    if not event.is_public:
        return None
    seat = _turn_seat(event)
    if seat is not None:
        player = record.seats[seat]
        if player.bot is not None:
            return None
        return HookEvent.TURN, {
            "seat": seat,
            "name": player.name,
            "round": round_number,
            "deadline": record.deadline if last_turn else None,
        }
    if event.type == "player_joined":
        return HookEvent.SEAT_JOINED, dict(event.data)
    if event.type == "game_started":
        return HookEvent.GAME_STARTED, dict(event.data)
    if event.type == "round_ended":
        return HookEvent.ROUND_SCORED, dict(event.data)
    if event.type == "game_finished":
        return HookEvent.GAME_FINISHED, dict(event.data)
    return None
