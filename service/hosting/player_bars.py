"""Barring an app's player: its tokens revoked, none minted, no seat taken
(:func:`service.hosting.players.set_barred`), and off the app's leaderboards.

A barred player is taken off every board of its app at once, and kept off: the
archiver posts a rating and then checks the bar (:func:`service.hosting.archiving.ratings_applied`),
so a post racing the bar is taken off again.  Lifting the bar puts the player back
on a board at its next rated game there.
"""

from __future__ import annotations

from service.hosting import leaderboards, players
from service.store import GameStore


def bar(store: GameStore, app_id: str, player_id: str) -> int:
    """Bar ``player_id`` of ``app_id``: how many of its tokens were revoked."""
    revoked = players.set_barred(store.apps, app_id, player_id, True)
    leaderboards.remove_everywhere(store, app_id, player_id)
    return revoked


def unbar(store: GameStore, app_id: str, player_id: str) -> int:
    """Lift the bar of ``player_id`` of ``app_id``: how many tokens were revoked (0)."""
    return players.set_barred(store.apps, app_id, player_id, False)
