"""A player's games (``GET /v1/me/games``): the games where the player holds a
seat, waiting, playing or finished (until they expire), from the player's index
(:meth:`~service.store.app_registry.AppRegistry.note_game`), each checked against
the game itself.

The index is written after the game's write that seated the player (it is in
another hash slot than the game, so not in the game's script): a seat taken by a
request that failed after its write is missing until the player's next seat
anywhere; an entry whose game is gone, or no longer seats the player (left,
cancelled), is dropped by this read.  So the list may miss a seat only when its
request failed, never shows a seat the player does not hold.
"""

from __future__ import annotations

from typing import Any

import orjson

from service.hosting.players import player_holder, player_tag
from service.hosting.record import seat_holders
from service.store import GameStore

MY_GAMES_LIMIT = 50
"""The most games listed (the latest seats taken first)."""


def my_games(store: GameStore, app: str, player_id: str) -> list[dict[str, Any]]:
    """``{id, seat, status, version, players}`` of each game where the player holds
    a seat, the latest taken first."""
    tag, holder = player_tag(app, player_id), player_holder(app, player_id)
    out, stale = [], []
    for game_id in store.apps.player_games(tag, MY_GAMES_LIMIT):
        loaded = store.load_game(game_id)
        public = store.load_public(game_id)
        seat = None
        if loaded is not None:
            holders = seat_holders(loaded[1])
            seat = next((i for i, h in enumerate(holders) if h == holder), None)
        if seat is None or public is None:
            stale.append(game_id)
            continue
        view = orjson.loads(public[2])
        out.append(
            {
                "id": game_id,
                "seat": seat,
                "status": view["status"],
                "version": public[0],
                "players": [p.get("name") for p in view["players"]],
            }
        )
    store.apps.forget_games(tag, stale)
    return out
