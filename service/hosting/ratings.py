"""PLACEHOLDER for helper A's ratings module (branch ``ratings``): only the
signature skill-based quick-join reads, every player at the default rating.
Replaced by A's module when that branch is merged."""

from __future__ import annotations

from dataclasses import dataclass

from service.store import GameStore


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating: its skill ``mu``, uncertainty ``sigma``, games played."""

    mu: float = 25.0
    sigma: float = 25.0 / 3
    games: int = 0


def current_rating(
    store: GameStore, app_id: str, ruleset: str, table_size: int, player_id: str
) -> Rating:
    """The player's rating in the app for the ruleset and table size."""
    return Rating()
