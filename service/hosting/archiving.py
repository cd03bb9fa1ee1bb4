"""A finished game's archive, and its players' histories: what outlives the live game.

The write that finishes a game (status ``finished``; a cancelled or aborted game has no
replay nor result and is not archived) queues it in its slot's
finished games, in its own script (:func:`~service.hosting.write_loop.finishing`,
:mod:`service.store.archives`).  An archiver (:mod:`service.botplay.archiver`)
claims it and runs :func:`archive_game`:

1. the archive, written once (``SET NX``) for ``ARCHIVE_TTL_SECONDS``: versioned
   JSON (:data:`ARCHIVE_FORMAT`) compressed with zlib -- the replay (as
   ``GET /v1/games/{id}/replay`` answers it), the seats (names, bots, whether their
   player resigned, and for a seat bound to a player its ``player_id`` and holder),
   when it was created and finished, and the changes of its players' ratings,
   computed from their ratings now (:func:`~service.hosting.rating_updates.rate_game`);
2. an entry in the history of each player holding a seat (another slot: written
   after, idempotent), with its rating before and after;
3. each player's change applied to its rating, once
   (:func:`~service.hosting.rating_updates.apply_ratings`: another slot, the
   player's; confirmed durable when the store is configured so);
4. then the queue's entry is removed.

Every step may run again, by the same worker or another that took the claim over:
the archive's first write stays (with the first computation of the ratings'
changes), the history entries are the same ones, and a player's rating records
the games applied to it.  So a game is archived, and counted in its players'
ratings, once, whoever crashed where.

Plain Python over a store, like :mod:`service.hosting.write_loop`.
"""

from __future__ import annotations

import time
import zlib
from typing import Any

import orjson

from service.config import Config
from service.hosting import fair_play, leaderboards, players
from service.hosting.players import player_holder
from service.hosting.rating_updates import AppliedRating, apply_ratings, rate_game, seat_change
from service.hosting.record import GameRecord
from service.hosting.tokens import PLAYER_HOLDER_PREFIX
from service.store import GameStore

ARCHIVE_FORMAT = 1
"""The format number of an archive's JSON (field ``f``), checked when it is read."""

HISTORY_LIMIT = 20
"""A page of a player's history, by default."""

HISTORY_MAX_LIMIT = 100
"""A page of a player's history, at most."""


class ArchiveFormatError(ValueError):
    """An archive of a format this code does not read."""


def build_archive(
    record: GameRecord,
    replay: bytes,
    finished_ms: int,
    ratings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The archive of ``record``, a finished game whose replay's JSON is ``replay``,
    with the changes of its players' ratings (None: not rated)."""
    seats = []
    for seat in record.seats:
        holder = seat.token_hash
        player = holder if holder is not None and holder.startswith(PLAYER_HOLDER_PREFIX) else None
        seats.append(
            {
                "seat": seat.seat,
                "name": seat.name,
                "bot": seat.bot,
                "player": player,
                "player_id": seat.player_id,
                "resigned": seat.resigned,
            }
        )
    return {
        "f": ARCHIVE_FORMAT,
        "id": record.id,
        "ruleset": record.ruleset,
        "created_at": record.created_at,
        "finished_ms": finished_ms,
        "seats": seats,
        "replay": orjson.Fragment(replay),
        "ratings": ratings,
    }


def pack(archive: dict[str, Any]) -> bytes:
    """The stored form of an archive: its JSON, compressed (zlib)."""
    return zlib.compress(orjson.dumps(archive), 9)


def unpack(stored: bytes) -> dict[str, Any]:
    """An archive from its stored form (:class:`ArchiveFormatError`: not one we read)."""
    archive: dict[str, Any] = orjson.loads(zlib.decompress(stored))
    if archive.get("f") != ARCHIVE_FORMAT:
        raise ArchiveFormatError(f"archive format {archive.get('f')!r}, not {ARCHIVE_FORMAT}")
    return archive


def history_entry(archive: dict[str, Any], seat: int) -> dict[str, Any]:
    """What a player's history says of an archived game where it held ``seat``."""
    replay = archive["replay"]
    return {
        "id": archive["id"],
        "finished_at": archive["finished_ms"] / 1000,
        "ruleset": archive["ruleset"],
        "table_size": len(archive["seats"]),
        "seat": seat,
        "players": [s["name"] for s in archive["seats"]],
        "totals": replay["totals"],
        "winners": replay["winners"],
        "rating": seat_change(archive, seat),
    }


def archive_game(store: GameStore, config: Config, game_id: str) -> dict[str, Any] | None:
    """Archive ``game_id``, add it to its players' histories and apply its changes to
    their ratings (see the module's docstring); the archive, or None when there is
    nothing to archive (the game is gone unarchived, or not finished).  Running it
    again changes nothing."""
    archives = store.archives
    stored = archives.load(game_id)
    if stored is None:
        found = store.load_game(game_id)
        if found is None:
            return None
        record = GameRecord.loaded(found[1], found[2])
        if record.status != "finished":
            return None
        finished_ms = archives.finished_at(game_id) or int(time.time() * 1000)
        replay = fair_play.replay_text(store, record)
        ratings = rate_game(store, record)
        stored = pack(build_archive(record, replay, finished_ms, ratings))
        if not archives.save(game_id, stored, config.archive_ttl_seconds):
            stored = archives.load(game_id) or stored  # another archiver's came first
    archive = unpack(stored)
    cutoff_ms = int((time.time() - config.archive_ttl_seconds) * 1000)
    for seat in archive["seats"]:
        if seat["player"] is not None:
            archives.add_history(
                seat["player"],
                game_id,
                archive["finished_ms"],
                orjson.dumps(history_entry(archive, seat["seat"])),
                cutoff_ms=cutoff_ms,
                ttl_seconds=config.archive_ttl_seconds,
            )
    ratings_applied(store, config, apply_ratings(store, archive))
    return archive


def ratings_applied(store: GameStore, config: Config, ratings: list[AppliedRating]) -> None:
    """Post each rated player's rating in the game's pool to its app's leaderboard:
    ``ratings`` holds each one now, with its games (applied by this run of the step,
    or by an earlier one that stopped before removing the queue's entry, so each is
    posted; a post is idempotent, and a late one never undoes a newer).  A barred
    player is taken off again after its post: checked after, so a bar set at any
    moment of the step is honoured (the bar removes the player from the boards)."""
    for applied in ratings:
        board = leaderboards.Board(applied.app_id, applied.ruleset, applied.table_size)
        rating = applied.rating
        listed = leaderboards.post(
            store, config, board, applied.player_id, rating.displayed, rating.games
        )
        if listed and players.is_barred(store.apps, applied.app_id, applied.player_id):
            leaderboards.remove_everywhere(store, applied.app_id, applied.player_id)


def archived_replay(store: GameStore, game_id: str) -> bytes | None:
    """The replay's JSON from ``game_id``'s archive, None when it has none."""
    stored = store.archives.load(game_id)
    if stored is None:
        return None
    return orjson.dumps(unpack(stored)["replay"])


def history(
    store: GameStore, app: str, player_id: str, limit: int, cursor: str | None
) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the finished games of ``player_id`` of ``app``, newest first, after
    ``cursor`` (a page's ``next``; None: the first page), and the next page's cursor
    (None: this is the last)."""
    rows = store.archives.history(player_holder(app, player_id), cursor, limit + 1)
    page = rows[:limit]
    entries = [orjson.loads(entry) for _member, entry in page]
    return entries, page[-1][0] if len(rows) > limit else None
