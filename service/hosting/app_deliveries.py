"""What a write of a game of an app sends to the app's webhook
(:mod:`service.hosting.app_webhooks`): one body per lifecycle event the webhook wants,
made from the write's events and the record after it, queued in the same atomic
script as the write, beside the game's own webhook's deliveries.

The bodies are the game webhook's (:mod:`service.hosting.webhook_deliveries`) with what
only the app may know: the ``player_id`` of the seat an event is about, and of every
seat (``players``) in the events about the whole game.  No token, no key, no hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from service.engine.game_events import Event
from service.hosting.app_webhooks import AppEvent, AppWebhook
from service.hosting.record import GameRecord
from service.hosting.webhook_deliveries import body, turn_data
from service.store.script_args import Deliveries

SEAT_EVENTS = {
    "player_joined": AppEvent.PLAYER_JOINED,
    "player_left": AppEvent.PLAYER_LEFT,
    "player_resigned": AppEvent.PLAYER_RESIGNED,
}
"""The game's events about one seat the app is told, with that seat's ``player_id``."""

GAME_EVENTS = {
    "game_created": AppEvent.GAME_CREATED,
    "game_started": AppEvent.GAME_STARTED,
    "game_finished": AppEvent.GAME_FINISHED,
    "game_cancelled": AppEvent.GAME_CANCELLED,
    "game_aborted": AppEvent.GAME_ABORTED,
}
"""The game's events about the whole game the app is told, with every seat's player."""


def deliveries(
    record: GameRecord,
    events: Sequence[Event],
    app_id: str,
    hook: AppWebhook,
    live: Callable[[int], bool],
    now: float | None = None,
) -> Deliveries:
    """``(header, index of the event, body)`` for each event of a write of ``record``
    that the app's webhook ``hook`` wants.  With ``hook.turn_only_offline``, a turn is
    told only if ``live(seat)`` (a stream open on the seat now) is false."""
    now = time.time() if now is None else now
    header = orjson.dumps(
        {"g": record.id, "u": hook.url, "k": hook.secret, "t": int(now * 1000), "a": app_id}
    )
    turns = turn_data(record, events)
    out = []
    for index, event in enumerate(events):
        found = _app_event(record, event, turns.get(index))
        if found is None or found[0] not in hook.events:
            continue
        kind, data = found
        if kind == AppEvent.TURN and hook.turn_only_offline and live(int(data["seat"])):
            continue
        out.append((header, index, body(kind, record.id, data, now)))
    return out


def players(record: GameRecord) -> list[dict[str, Any]]:
    """Every seat: its number, name (None: open), bot and player (None: not an app's
    player's; a rematch's seat names the player it is reserved for)."""
    return [
        {
            "seat": seat.seat,
            "name": seat.name,
            "bot": seat.bot,
            "player_id": None if seat.name is None else seat.player_id,
        }
        for seat in record.seats
    ]


def _app_event(
    record: GameRecord, event: Event, turn: dict[str, Any] | None
) -> tuple[str, dict[str, Any]] | None:
    if not event.is_public:
        return None
    if turn is not None:
        return AppEvent.TURN, {**turn, "player_id": record.seats[turn["seat"]].player_id}
    kind: str | None = SEAT_EVENTS.get(event.type)
    if kind is not None:
        seat = record.seats[int(event.data["seat"])]
        return kind, {**event.data, "player_id": seat.player_id}
    kind = GAME_EVENTS.get(event.type)
    if kind is not None:
        return kind, {**event.data, "players": players(record)}
    return None
