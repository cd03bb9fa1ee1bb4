"""Skill-based quick-join: the window around a rated player's skill that a waiting
table's players' mean skill must be in for quick-join to seat the player there.

In ``AUTH_MODE=apps``, a player quick-joining with its player credential is a
*rated* player: its skill is its rating's ``mu``
(:func:`service.hosting.ratings.current_rating`, for the table's ruleset and size).
A waiting table's skill is the mean of the skills of its rated players, kept in the
table's index with the game (:mod:`service.store.skill_seek`): a ticket handed out
adds its player's, a ticket given back removes it, and every other change of the
game's seats (a create, a join by id, a leave, a removal) sets them from the game's
seated players (:func:`seated_skills`).  The window of a table that has waited
``t`` seconds is ``min(base + widen_per_second * t, max)``
(:meth:`SkillWindow.at`): a table nobody close in skill joins becomes open to
players further away, until ``max``.  The settings are the configuration's
``QUICKJOIN_SKILL_*``, or the app's own (``three-thirteen-admin apps
matchmaking``: :data:`service.hosting.apps.MATCHMAKING`).

An anonymous quick-join (open mode; an app's backend) is seated first come, first
served as before, at any table; a table without a rated player fits anyone.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.config import Config
from service.hosting.apps import App
from service.hosting.ratings import current_rating
from service.hosting.record import GameRecord
from service.hosting.tokens import app_of_game
from service.store import GameStore
from service.store.skill_seek import SkillAsk


@dataclass(frozen=True, slots=True)
class SkillWindow:
    """The window a table's mean skill must be in around a rated player's: ``base``
    for a table just listed, ``widen`` more for each second it waited, at most
    ``most``; and how long after it was listed a table is filled with bots
    (``bot_fill``, 0: never; :mod:`service.hosting.bot_fill`)."""

    base: float
    widen: float
    most: float
    bot_fill: float = 0.0

    @classmethod
    def of(cls, config: Config, app: App | None = None) -> SkillWindow:
        """The window ``app`` set (each setting it did not set: ``config``'s).

        >>> SkillWindow.of(Config())
        SkillWindow(base=3.0, widen=0.2, most=25.0, bot_fill=0)
        >>> SkillWindow.of(Config(), App("a1b2c3d4e5", "x", 0.0, matchmaking={"skill_max": 9}))
        SkillWindow(base=3.0, widen=0.2, most=9, bot_fill=0)
        """
        own = {} if app is None else app.matchmaking
        return cls(
            own.get("skill_base", config.quickjoin_skill_base),
            own.get("skill_widen_per_second", config.quickjoin_skill_widen_per_second),
            own.get("skill_max", config.quickjoin_skill_max),
            own.get("bot_fill_seconds", config.quickjoin_bot_fill_seconds),
        )

    def at(self, waited: float) -> float:
        """The window of a table that has waited ``waited`` seconds.

        >>> window = SkillWindow(3.0, 0.5, 10.0)
        >>> window.at(0), window.at(4), window.at(60)
        (3.0, 5.0, 10.0)
        """
        return min(self.base + self.widen * max(0.0, waited), self.most)

    def ask(self, player_id: str, skill: float) -> SkillAsk:
        """What the seek of ``player_id``, of ``skill``, asks of a table's games."""
        return SkillAsk(player_id, skill, self.base, self.widen, self.most)


def player_skill(store: GameStore, app_id: str, ruleset: str, seats: int, player_id: str) -> float:
    """The skill of the app's player at tables of ``ruleset`` and ``seats``: its
    rating's ``mu``."""
    return current_rating(store, app_id, ruleset, seats, player_id).mu


def seated_skills(store: GameStore, record: GameRecord) -> dict[str, float]:
    """The skills of the players seated at an app's game (player id -> skill; none
    for a game of no app, or a seat not held by an app's player)."""
    app_id = app_of_game(record.id)
    if app_id is None:
        return {}
    seats = len(record.seats)
    return {
        seat.player_id: player_skill(store, app_id, record.ruleset, seats, seat.player_id)
        for seat in record.seats
        if seat.player_id is not None and seat.name is not None  # kept when it left
    }
