"""What tells a client that a game's history is not the one it saw: the last point
both share (:mod:`service.store.divergence`), as a reset names it -- on the events
endpoint (:mod:`service.api.streams`) and in a 412 ``HISTORY_DIVERGED``."""

from __future__ import annotations

from typing import Any

from service.store.history import Position, event_id


def reset_fields(shared: Position) -> dict[str, Any]:
    """The last point both histories share, as seq and event id.

    >>> reset_fields(Position(4, "5f0c1a2b3c4d5e6f"))
    {'shared_seq': 4, 'shared_id': '4.5f0c1a2b3c4d5e6f'}
    """
    return {"shared_seq": shared.seq, "shared_id": event_id(shared.seq, shared.tag or "")}
