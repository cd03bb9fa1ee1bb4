"""An app's games (``AUTH_MODE=apps``): the index of the games it made
(``GET /v1/app/games``), each checked against the game itself, and its view of
one game, which names the player of each seat.

The index is written after the game's own write that made it (it is in the app's
hash slot, not the game's, so not in the game's script), as a player's index is
(:mod:`service.hosting.player_games`): a game whose request failed after its write
is missing from it; an entry whose game is gone is dropped as it is read.  So the
listing never shows a game that is not there, and every entry shows the game as
it is now.
"""

from __future__ import annotations

from typing import Any

import orjson

from service.hosting import game_views
from service.hosting.record import GameRecord
from service.hosting.tokens import app_of_game
from service.store import GameStore

SCAN_MOST = 500
"""The most index entries one page looks at: a page with filters that match few
games comes shorter than asked (its ``next`` goes on from where it stopped)."""


def member_of(record: GameRecord) -> str:
    """The game's member in its app's index: ``<created ms, 15 digits>:<id>``,
    which sorts the newest last (and is a page's cursor).

    >>> from service.hosting.record import GameRecord
    >>> from service.engine.options import preset
    >>> member_of(GameRecord("g1", "classic", preset("classic"), [], "s", created_at=1.5))
    '000000000001500:g1'
    """
    return f"{int(record.created_at * 1000):015d}:{record.id}"


def note(store: GameStore, record: GameRecord) -> None:
    """Add a game just written for the first time to its app's index (a game of
    no app, made in open mode, to none)."""
    app = app_of_game(record.id)
    if app is not None:
        store.apps.note_app_game(app, member_of(record))


def page(
    store: GameStore,
    app: str,
    *,
    status: str | None = None,
    player_id: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the app's games, the newest first: those of ``status`` and with a
    seat of ``player_id`` (when given), each as it is now (:func:`entry`), and the
    cursor of the next page (None at the end).  At most :data:`SCAN_MOST` entries
    are looked at: a page may come shorter than ``limit``, even empty, with a
    ``next``."""
    games: list[dict[str, Any]] = []
    scanned, last = 0, cursor
    while len(games) < limit and scanned < SCAN_MOST:
        count = min(max(limit - len(games), 20), SCAN_MOST - scanned)
        members = store.apps.app_games(app, last, count)
        if not members:
            return games, None
        scanned += len(members)
        ids = [member.partition(":")[2] for member in members]
        gone = []
        for member, found in zip(members, store.lobby.states(ids), strict=True):
            if len(games) == limit:  # a full page: the next one starts after the last
                break
            last = member
            if found is None:
                gone.append(member)
                continue
            game = entry(orjson.loads(found[0]), orjson.loads(found[1]), member)
            if _matches(game, status, player_id):
                games.append(game)
        store.apps.forget_app_games(app, gone)
        if len(games) < limit and len(members) < count:
            return games, None  # the index's end
    return games, last


def _matches(game: dict[str, Any], status: str | None, player_id: str | None) -> bool:
    if status is not None and game["status"] != status:
        return False
    return player_id is None or any(p["player_id"] == player_id for p in game["players"])


def entry(public: dict[str, Any], doc: dict[str, Any], member: str) -> dict[str, Any]:
    """A game as its app's listing shows it, from its public view and document as
    stored (``member``: its index entry, which holds when it was made)."""
    return {
        "id": public["id"],
        "status": public["status"],
        "version": public["version"],
        "created_at": int(member[:15]) / 1000,
        "ruleset": public["ruleset"],
        "listed": public["listed"],
        "players": [
            {
                "seat": player["seat"],
                "name": player["name"],
                "bot": player["bot"],
                "player_id": None if player["name"] is None else seat.get("player_id"),
            }
            for player, seat in zip(public["players"], doc["seats"], strict=True)
        ],
    }


def app_view(record: GameRecord, version: int) -> dict[str, Any]:
    """The public view as the game's app sees it: each seat's ``player_id`` too
    (the app's id of the player bound to it, or None: not an app's player's, or open)."""
    out = game_views.view(record, version)
    for player, seat in zip(out["players"], record.seats, strict=True):
        player["player_id"] = None if seat.name is None else seat.player_id
    return out
