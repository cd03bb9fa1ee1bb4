"""Quick-join: a seat at a table of the asked kind, in the oldest listed game
that has one, or in a new game listed for the next players.

How no seat is given twice and no game is over-filled, however many ask at once:

1. The table's index (:meth:`~service.store.lobby.LobbyIndex.seek`, one atomic
   script) hands out *tickets*: each of a game's open seats once.  So a game is
   contended by at most as many joiners as it has seats.
2. A ticket is only a pointer: the seat is taken by the game's own write (the
   join every client makes, :func:`service.hosting.seating.join`), which refuses
   a game that is full, started or cancelled.  A refused ticket drops the game
   from the table, and the client seeks again.
3. With no ticket to give, the client makes a game with itself seated, then asks
   the table to list it -- unless another client's game was listed meanwhile:
   then it gets a ticket to that one and deletes its own, which nobody ever saw.
   So a table has a new game only when every seat of the others was handed out.

A client still without a seat after :data:`TRIES` rounds gets 503 ``LOBBY_BUSY``
with ``Retry-After``.
"""

from __future__ import annotations

from typing import Any

from service.api import lobby_index
from service.api.context import services, store
from service.api.problems import ApiError
from service.api.snapshots import snapshot
from service.api.writes import Write, create_game, optimistic_write
from service.hosting import seating
from service.hosting.lobby import open_seats, table_of
from service.hosting.record import GameRecord
from service.hosting.refusals import HostingError
from service.store import GameNotFound

TRIES = 8
"""Rounds of seek-then-join before a quick-join gives up (each refused one means
another client took the game in between)."""

JOIN_ATTEMPTS = 4
"""Tries of the join's write on a game changing under it (at most its seats'
joiners race for it)."""


def quick_join(body: dict[str, Any]) -> dict[str, Any]:
    """Seat the caller at a table of the kind ``body`` asks for: the answer's body
    (``id``, ``seat``, ``token``, ``version``, ``status``, ``created``)."""
    table = table_of(
        body["ruleset"],
        body["options"],
        body["seats"],
        body["turn_timeout_seconds"],
        body["autopilot_after_missed_turns"],
    )
    lifetime = services().config.lobby_waiting_seconds
    lobby = store().lobby
    for _round in range(TRIES):
        ticket = lobby.seek(table, lifetime)
        if ticket is None:
            made = _new_game(body)
            ticket = lobby.seek(
                table, lifetime, (made.record.id, made.record.created_at, open_seats(made.record))
            )
            assert ticket is not None
            if ticket[1]:
                lobby_index.list_game(made.record)
                return made.answer
            lobby.discard(made.record.id)  # another game was listed first: take a seat there
        game_id = ticket[0]
        try:
            return _join(game_id, body["name"])
        except (HostingError, GameNotFound):  # full, started or cancelled: not to offer
            lobby.offer(table, game_id, 0.0, 0, lifetime)
    raise ApiError(
        "LOBBY_BUSY",
        f"no seat could be taken in {TRIES} tries (every game offered filled first); retry",
        headers={"Retry-After": "1"},
    )


class _Made:
    def __init__(self, record: GameRecord, answer: dict[str, Any]) -> None:
        self.record, self.answer = record, answer


def _new_game(body: dict[str, Any]) -> _Made:
    """A new listed game with the caller in seat 0, saved but not yet listed."""
    record, tokens, events = seating.create_record(
        [{"name": body["name"]}],
        body["seats"],
        body["ruleset"],
        body["options"],
        None,
        False,
        body["turn_timeout_seconds"],
        body["autopilot_after_missed_turns"],
        listed=True,
    )
    create_game(record, events)
    answer = {
        "id": record.id,
        "seat": 0,
        "token": tokens[0],
        "version": 1,
        "status": record.status,
        "created": True,
    }
    return _Made(record, answer)


def _join(game_id: str, name: str) -> dict[str, Any]:
    """Take the lowest open seat of ``game_id`` through the game's own write."""

    def step(version: int, record: GameRecord) -> tuple[Write, dict[str, Any]]:
        seat, token, events = seating.join(record, name)
        answer = {
            "id": game_id,
            "seat": seat,
            "token": token,
            "version": version + 1,
            "status": record.status,
            "created": False,
        }
        return Write(events, snapshot(record, version + 1)), answer

    for _attempt in range(JOIN_ATTEMPTS):
        try:
            return optimistic_write(game_id, step)
        except ApiError as busy:
            if busy.code != "CONFLICT":
                raise
    raise ApiError("CONFLICT", "the game is changing too fast; retry")
