"""What a write saves beside a game's document: the texts of its views at the new
version, so that a read needs no document (``GET /v1/games/{id}`` the public view,
``GET /view`` a seat's part), the turn deadline and the results when they changed;
and the events, as the store takes them."""

from __future__ import annotations

from typing import Any

import orjson

from service.engine.game_events import Event
from service.hosting import game_views
from service.hosting.record import GameRecord
from service.store import StoredEvent


def snapshot(record: GameRecord, version: int) -> dict[str, Any]:
    """The keyword arguments of a store write of ``record`` at ``version``: the
    public view ready to send but for the results, every seat's part of its view,
    the deadline, and the results when they changed."""
    return snapshot_with(
        record, game_views.public_json(record, version), game_views.seat_parts_json(record, version)
    )


def snapshot_with(record: GameRecord, public: bytes, seat_parts: bytes) -> dict[str, Any]:
    """:func:`snapshot` with its view texts built already (by a move's answer)."""
    return {
        "public": public,
        "deadline": record.deadline,
        "results": record.results_to_save(),
        "seat_parts": seat_parts,
    }


def events_payload(events: list[Event]) -> list[StoredEvent]:
    return [(orjson.dumps(e.to_dict()), e.seat) for e in events]
