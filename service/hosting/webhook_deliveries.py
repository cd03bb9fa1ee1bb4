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
from service.store.script_args import Deliveries


def deliveries(record: GameRecord, events: Sequence[Event], now: float | None = None) -> Deliveries:
    """What a write of ``record`` with ``events`` sends to the game's webhook: ``(header,
    index of the event, body)`` for each event the webhook wants, the header the
    game's, URL, secret and time in ms.  The store adds the event's ``seq`` to each body."""
    hook = record.webhook
    if hook is None:
        return []
    now = time.time() if now is None else now
    header = orjson.dumps({"g": record.id, "u": hook.url, "k": hook.secret, "t": int(now * 1000)})
    turns = turn_data(record, events)
    out = []
    for index, event in enumerate(events):
        found = _hook_event(event, turns.get(index))
        if found is not None and found[0] in hook.events:
            kind, data = found
            out.append((header, index, body(kind, record.id, data, now)))
    return out


def body(kind: str, game_id: str, data: dict[str, Any], now: float) -> bytes:
    """A delivery's body, but its ``seq`` (which the store adds): a new delivery id."""
    stamp = datetime.fromtimestamp(now, UTC).isoformat(timespec="milliseconds")
    return orjson.dumps(
        {"id": delivery_id(), "type": kind, "timestamp": stamp, "game_id": game_id, "data": data}
    )


def turn_data(record: GameRecord, events: Sequence[Event]) -> dict[int, dict[str, Any]]:
    """The index of each ``turn`` event of a human seat among ``events`` and what a
    webhook is told of it: ``seat``, ``name``, ``round``, ``deadline`` (the record's
    when it is the write's last turn; an earlier one was played in the same write).
    A seat played by a bot (autopilot too) is not told: its turn is played at once."""
    last_turn = max((i for i, e in enumerate(events) if _turn_seat(e) is not None), default=-1)
    round_number = _round_before(record, events)
    out = {}
    for index, event in enumerate(events):
        if event.type == "round_started":
            round_number = int(event.data["round"])
        seat = _turn_seat(event)
        if seat is None or record.seats[seat].bot is not None:
            continue
        out[index] = {
            "seat": seat,
            "name": record.seats[seat].name,
            "round": round_number,
            "deadline": record.deadline if index == last_turn else None,
        }
    return out


def _round_before(record: GameRecord, events: Sequence[Event]) -> int | None:
    """The number of the round in play before ``events``: one before the first
    round they start, else the record's round now."""
    for event in events:
        if event.type == "round_started":
            return int(event.data["round"]) - 1
    state = record.state
    return None if state is None or state.round is None else state.spec.number


def _turn_seat(event: Event) -> int | None:
    if event.type == "turn" and event.is_public:
        return int(event.data["seat"])
    return None


def _hook_event(event: Event, turn: dict[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """The webhook event of an engine event, if it makes one (``turn``: what
    :func:`turn_data` tells of it, None for a turn not told)."""
    if not event.is_public:
        return None
    if turn is not None:
        return HookEvent.TURN, turn
    if event.type == "player_joined":
        return HookEvent.SEAT_JOINED, dict(event.data)
    if event.type == "game_started":
        return HookEvent.GAME_STARTED, dict(event.data)
    if event.type == "round_ended":
        return HookEvent.ROUND_SCORED, dict(event.data)
    if event.type == "game_finished":
        return HookEvent.GAME_FINISHED, dict(event.data)
    return None
