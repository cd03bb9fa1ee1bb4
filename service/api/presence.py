"""Signs of life of a listed table's seated players, for the lobby to put live
tables first (:func:`service.hosting.lobby_listing.listing`, quick-join's seek).

A sign of life is a request made with a seat's token in a listed game still
waiting for players: the seat's view, its events (a long poll, a stream: at
each of the stream's heartbeats too).  Anyone can read a game's public view, so
that is none.  The lobby's index is told at most once every
``LOBBY_LIVE_SECONDS / 4`` per seat holder and process (:func:`note`), so a
player polling its view costs the index a write every 15 s, not one per poll;
a request of an unlisted or started game costs a dictionary look-up.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import orjson

from service.api.context import Services
from service.hosting.lobby_operations import public_table, record_table
from service.hosting.record import GameRecord
from service.store import StoreUnavailable

log = logging.getLogger(__name__)

NOTES_PER_WINDOW = 4
"""A seat holder's signs of life are noted this many times per ``LOBBY_LIVE_SECONDS``
at most (per process): often enough that a table followed without a pause stays live."""

REMEMBERED = 50_000
"""Entries each memo below keeps at most; past that it starts afresh (the cost: one
more note per seat holder)."""

Spot = Callable[[], str | None]
"""Where a game is in the lobby: its quick-join table while it is a listed game
waiting for players, else None (asked once per game and process: a game is
never listed later, nor waiting again)."""

_UNKNOWN = object()
_noted: dict[tuple[str, str], float] = {}
"""(game, seat holder) -> when its last sign of life was noted (monotonic)."""
_tables: dict[str, Any] = {}
"""game -> its quick-join table while it is listed and waiting, else None."""


def note(services: Services, game_id: str, holder: str, spot: Spot) -> None:
    """The holder of a seat of ``game_id`` (its token's hash) made a request: tell
    the lobby, unless it was told of that holder lately or the game is not a
    listed one waiting for players.  A failure only costs the hint."""
    config = services.config
    now = time.monotonic()
    last = _noted.get((game_id, holder))
    if last is not None and now - last < config.lobby_live_seconds / NOTES_PER_WINDOW:
        return
    _remember(_noted, (game_id, holder), now)
    try:
        table = _tables.get(game_id, _UNKNOWN)
        if table is _UNKNOWN:
            table = spot()
            _remember(_tables, game_id, table)
        if table is None:
            return
        listed = services.store.lobby.seen(
            game_id, table, time.time(), config.lobby_waiting_seconds
        )
    except StoreUnavailable as exc:
        log.warning("lobby not told of a sign of life: %s", exc)
        return
    if not listed:  # started, cancelled or expired since: never waiting again
        _tables[game_id] = None


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) >= REMEMBERED:
        memo.clear()
    memo[key] = value


def of_public(public: bytes) -> Spot:
    """The spot of a game from its public view's JSON text."""

    def spot() -> str | None:
        view = orjson.loads(public)
        waiting = view.get("listed") and view.get("status") == "waiting"
        return public_table(view) if waiting else None

    return spot


def of_record(record: GameRecord) -> Spot:
    """The spot of a game from its record."""
    return lambda: record_table(record) if record.listed and record.status == "waiting" else None


def of_store(services: Services, game_id: str) -> Spot:
    """The spot of a game read from the store (its saved public view)."""

    def spot() -> str | None:
        found = services.store.lobby.views([game_id])[0]
        return None if found is None else of_public(found[1])()

    return spot
