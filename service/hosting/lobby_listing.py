"""Keeping the lobby's index (:mod:`service.store.lobby_index`) in step with listed games.

The game's own write is the authority; the index is written beside it, in writes
of its own (other hash slots), so that it may hold too much but never too little:

* a listing gains a game *before* the write that gives the game that status
  (:func:`before_write`; if that fails, so does the request, and nothing is
  written);
* the game leaves its former listing, and its quick-join table learns its open
  seats, *after* the write (:func:`committed`, :func:`seats_changed`).  If one of
  those fails, the answer does not: the entry left over is a hint that readers
  check against the game (a listing skips an entry whose game has not reached
  its status yet, and moves one whose game has passed it; quick-join drops a
  game that refuses it), and an entry no write refreshes expires.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import orjson

from service.config import Config
from service.hosting.lobby_operations import open_seats, record_table, summary
from service.hosting.record import GameRecord
from service.hosting.skill_window import seated_skills
from service.store import GameStore, StoreUnavailable
from service.store.lobby_index import LISTED_STATUSES, game_of_member

log = logging.getLogger(__name__)

STAGES = ("waiting", "playing", "finished", "cancelled", "aborted")
"""A game's statuses in the order it goes through them (never back; the last
three end a game, and a game ends one way only)."""


LIVE, IDLE = "L", "I"
"""The sections of the waiting games' listing, as its cursors name them."""


def listing(
    store: GameStore,
    config: Config,
    status: str,
    cursor: str | None,
    limit: int,
    ruleset: str | None,
    seats: int | None,
) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the listing of ``status``: the summaries of its games, each
    checked against the game itself, and the cursor of the next page (None at
    the end).  An entry whose game is gone or unlisted is dropped, one whose game
    moved on is moved to its listing, one whose write is still under way skipped.

    The waiting games come in two sections, each newest first: the **live**
    tables (a seated player showed life within ``LOBBY_LIVE_SECONDS`` of the
    first page: :mod:`service.api.presence`), then the others.  Where the live
    section ends is fixed by the first page (its cursors carry that time): a
    table is in one section only, so paging never gives it twice.  A cursor that
    names no section (the other statuses, and cursors of before the sections)
    pages through every entry by creation."""
    index = store.lobby
    section, since, member = _parse_cursor(cursor)
    if status != "waiting":
        section = since = None
    elif cursor is None:
        section, since = LIVE, time.time() - config.lobby_live_seconds
    games: list[dict[str, Any]] = []
    if section == LIVE:
        assert since is not None
        live = index.live_page(status, member, limit, since, ruleset, seats)
        games += _checked(store, config, status, live.members)
        if live.next is not None:
            return games, f"{LIVE}{_ms(since):015d}.{live.next}"
        section, member, limit = IDLE, None, limit - len(live.members)
        if limit <= 0:
            return games, f"{IDLE}{_ms(since):015d}"
    page = index.page(status, member, limit, ruleset, seats, since if section == IDLE else None)
    games += _checked(store, config, status, page.members)
    if page.next is None:
        return games, None
    if section is None or since is None:
        return games, page.next
    return games, f"{section}{_ms(since):015d}.{page.next}"


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def _parse_cursor(cursor: str | None) -> tuple[str | None, float | None, str | None]:
    """``(section, its time, member)`` of a listing cursor (its form is checked by
    the schema: see :data:`service.api.schemas.lobby_schemas.CURSOR`).

    >>> _parse_cursor("000000000001500:g1")
    (None, None, '000000000001500:g1')
    >>> _parse_cursor("L000000000009000.000000000001500:g1")
    ('L', 9.0, '000000000001500:g1')
    >>> _parse_cursor("I000000000009000")
    ('I', 9.0, None)
    """
    if cursor is None or cursor[0] not in (LIVE, IDLE):
        return None, None, cursor
    return cursor[0], int(cursor[1:16]) / 1000, cursor[17:] or None


def _checked(
    store: GameStore, config: Config, status: str, members: list[str]
) -> list[dict[str, Any]]:
    """The summaries of the games of a page's ``members``, each checked against the
    game itself (see :func:`listing`)."""
    index = store.lobby
    ids = [game_of_member(member) for member in members]
    games = []
    for member, game_id, found in zip(members, ids, index.views(ids), strict=True):
        created_at = int(member[:15]) / 1000
        public = None if found is None else orjson.loads(found[1])
        if public is None or not public["listed"]:  # expired, or another game's id
            index.drop(status, game_id, created_at)
            continue
        if public["status"] != status:
            if STAGES.index(public["status"]) > STAGES.index(status):
                relist(store, config, game_id, status, public, created_at)  # it moved on
            continue  # else listed ahead of a write still under way (or failed)
        games.append(summary(public, created_at))
    return games


def listing_expiry(config: Config, status: str, created_at: float) -> float:
    """When an entry listed under ``status`` now leaves the lobby: a waiting game
    :attr:`~service.config.Config.lobby_waiting_seconds` after its creation,
    another when the game would expire without a change."""
    if status == "waiting":
        return created_at + config.lobby_waiting_seconds
    return time.time() + config.game_ttl_seconds


def list_game(store: GameStore, config: Config, record: GameRecord) -> None:
    """List a game under its status."""
    _put(
        store,
        config,
        record.status,
        record.id,
        record.created_at,
        record.ruleset,
        len(record.seats),
    )


def _put(
    store: GameStore,
    config: Config,
    status: str,
    game_id: str,
    created_at: float,
    ruleset: str,
    seats: int,
) -> None:
    if status in LISTED_STATUSES:
        expiry = listing_expiry(config, status, created_at)
        store.lobby.put(status, game_id, created_at, ruleset, seats, expiry)


def relist(
    store: GameStore,
    config: Config,
    game_id: str,
    was: str,
    public: dict[str, Any],
    created_at: float,
) -> None:
    """Move an entry found listed under ``was`` to the later status of its game's
    public view."""

    def move() -> None:
        seats = len(public["players"])
        _put(store, config, public["status"], game_id, created_at, public["ruleset"], seats)
        store.lobby.drop(was, game_id, created_at)

    _hint(move)


def offer_seats(store: GameStore, config: Config, record: GameRecord) -> None:
    """Tell the game's quick-join table how many seats it has open now, and the
    skills of its seated players (:mod:`service.hosting.skill_window`)."""
    seats = open_seats(record)
    store.lobby.offer(
        record_table(record),
        record.id,
        record.created_at,
        seats,
        config.lobby_waiting_seconds,
        seated_skills(store, record) if seats else None,
    )


def seats_changed(store: GameStore, config: Config, record: GameRecord) -> None:
    """A listed game was made, or its seats changed (a join by id, a leave): offer
    its open seats to quick-join."""
    if record.listed:
        _hint(lambda: offer_seats(store, config, record))


def before_write(store: GameStore, config: Config, record: GameRecord) -> None:
    """Called before every write of a game: a listed game that the write gives a
    new status (or makes) is listed under it first."""
    if record.listed and record.status != record.loaded_status:
        list_game(store, config, record)


def committed(store: GameStore, config: Config, record: GameRecord) -> None:
    """Called after every write of a game: a listed game whose status changed
    leaves its former listing (and quick-join, once it is not waiting)."""
    was = record.loaded_status
    if not record.listed or was == record.status:
        return

    def move() -> None:
        if was in LISTED_STATUSES:
            store.lobby.drop(was, record.id, record.created_at)
        if was == "waiting":
            offer_seats(store, config, record)

    _hint(move)


def _hint(update: Callable[[], object]) -> None:
    try:
        update()
    except StoreUnavailable as exc:  # the game's write stands; the entry is a hint
        log.warning("lobby index not updated: %s", exc)
