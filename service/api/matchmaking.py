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
with ``Retry-After``.  A quick-join with an ``Idempotency-Key`` saves its answer
with the write that seats it, and notes that game under the key before: a retry
is answered the same seat.
"""

from __future__ import annotations

from typing import Any

from flask import url_for

from service.api import lobby_index
from service.api.context import services, store
from service.api.idempotency import Idempotency
from service.api.problems import ApiError
from service.api.snapshots import snapshot
from service.api.writes import Write, create_game, optimistic_write
from service.hosting import seating
from service.hosting.lobby import open_seats, table_of
from service.hosting.record import GameRecord
from service.hosting.refusals import HostingError
from service.store import GameNotFound, IdempotentReplay
from service.store.script_args import IdempotencyRecord

TRIES = 8
"""Rounds of seek-then-join before a quick-join gives up (each refused one means
another client took the game in between)."""

JOIN_ATTEMPTS = 4
"""Tries of the join's write on a game changing under it (at most its seats'
joiners race for it)."""


def quick_join(body: dict[str, Any], idem: Idempotency | None) -> dict[str, Any]:
    """Seat the caller at a table of the kind ``body`` asks for: the answer's body
    (``id``, ``seat``, ``token``, ``version``, ``status``, ``created``).

    With ``idem`` (the request's ``Idempotency-Key``) the answer is saved with the
    write that seats the client, and the game noted under the key first: a retry
    raises :class:`IdempotentReplay` with that answer."""
    table = table_of(
        body["ruleset"],
        body["options"],
        body["seats"],
        body["turn_timeout_seconds"],
        body["autopilot_after_missed_turns"],
    )
    lifetime = services().config.lobby_waiting_seconds
    lobby = store().lobby
    if idem is not None:
        earlier = lobby.remembered(idem.key_hash)
        if earlier is not None:
            _game, saved = store().load_with_idempotency(earlier, idem.key_hash)
            if saved is not None:
                raise IdempotentReplay(*saved)
    for _round in range(TRIES):
        ticket = lobby.seek(table, lifetime)
        if ticket is None:
            record, answer = _new_game(body, idem)
            ticket = lobby.seek(table, lifetime, (record.id, record.created_at, open_seats(record)))
            assert ticket is not None
            if ticket[1]:
                _remember(idem, record.id)
                lobby_index.list_game(record)
                return answer
            lobby.discard(record.id)  # another game was listed first: take a seat there
        game_id = ticket[0]
        _remember(idem, game_id)
        try:
            return _join(game_id, body["name"], idem)
        except (HostingError, GameNotFound):  # full, started or cancelled: not to offer
            lobby.offer(table, game_id, 0.0, 0, lifetime)
    raise ApiError(
        "LOBBY_BUSY",
        f"no seat could be taken in {TRIES} tries (every game offered filled first); retry",
        headers={"Retry-After": "1"},
    )


def _remember(idem: Idempotency | None, game_id: str) -> None:
    if idem is not None:
        store().lobby.remember(idem.key_hash, game_id, services().config.idempotency_ttl_seconds)


def _answer(record: GameRecord, seat: int, token: str, version: int) -> dict[str, Any]:
    return {
        "id": record.id,
        "seat": seat,
        "token": token,
        "version": version,
        "status": record.status,
        "created": version == 1,
    }


def _saved(idem: Idempotency | None, answer: dict[str, Any]) -> IdempotencyRecord | None:
    """The idempotency record of ``answer`` (None without a key)."""
    if idem is None:
        return None
    location = url_for("games.Game", game_id=answer["id"])
    return idem.record(201, answer, answer["version"], headers={"Location": location})


def _new_game(body: dict[str, Any], idem: Idempotency | None) -> tuple[GameRecord, dict[str, Any]]:
    """A new listed game with the caller in seat 0, saved but not yet listed, and
    the answer to give if it is."""
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
    answer = _answer(record, 0, tokens[0], 1)
    create_game(record, events, _saved(idem, answer))
    return record, answer


def _join(game_id: str, name: str, idem: Idempotency | None) -> dict[str, Any]:
    """Take the lowest open seat of ``game_id`` through the game's own write."""

    def step(version: int, record: GameRecord) -> tuple[Write, dict[str, Any]]:
        seat, token, events = seating.join(record, name)
        answer = _answer(record, seat, token, version + 1)
        return Write(events, snapshot(record, version + 1), _saved(idem, answer)), answer

    for _attempt in range(JOIN_ATTEMPTS):
        try:
            return optimistic_write(game_id, step, idem=idem)
        except ApiError as busy:
            if busy.code != "CONFLICT":
                raise
    raise ApiError("CONFLICT", "the game is changing too fast; retry")
