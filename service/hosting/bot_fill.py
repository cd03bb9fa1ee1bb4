"""Filling a waiting quick-join table with bots of its players' skill.

In ``AUTH_MODE=apps``, a game a player's quick-join lists (skill-based:
:mod:`service.hosting.skill_window`) may be filled with bots once it has waited
long enough (``QUICKJOIN_BOT_FILL_SECONDS``, or the app's ``bot_fill_seconds``; 0:
never).  The game is made with its deadline at that time (:func:`fill_at`), so the
bot workers' due-time mechanism (:mod:`service.hosting.due_turns`,
:mod:`service.store.due_games`) claims it then, like an overdue turn; the claim's
write seats a bot in every open seat and starts the game (:func:`fill_with_bots`).
A player who takes the last seat first starts the game without bots (the deal
resets the deadline); the two writes race through the game's own write loop, so a
seat is never given twice: the loser is refused as usual.

The bots' level is that of the seated players' mean skill (rating ``mu``,
:func:`level_for`): below :data:`STRONG_FROM` ``basic``, below :data:`EXPERT_FROM`
``strong``, else ``expert`` -- ``basic`` at the default rating (25), the stronger
levels a little over one and two default uncertainties (8.3) above it.
"""

from __future__ import annotations

from statistics import fmean

from service.engine.game_events import Event
from service.hosting.record import GameRecord
from service.hosting.skill_window import seated_skills
from service.store import GameStore

STRONG_FROM = 30.0
"""The mean skill from which a table is filled with ``strong`` bots."""

EXPERT_FROM = 36.0
"""The mean skill from which a table is filled with ``expert`` bots."""


def level_for(skill: float | None) -> str:
    """The bots' level for a table of mean ``skill`` (None: no rated player).

    >>> level_for(None), level_for(25.0), level_for(31.0), level_for(40.0)
    ('basic', 'basic', 'strong', 'expert')
    """
    if skill is None or skill < STRONG_FROM:
        return "basic"
    return "strong" if skill < EXPERT_FROM else "expert"


def fill_at(record: GameRecord, seconds: float) -> float:
    """When a game listed at ``record.created_at`` is filled with bots."""
    return record.created_at + seconds


def fill_with_bots(store: GameStore, record: GameRecord, now: float) -> list[Event]:
    """Seat a bot of the players' level in every open seat of a waiting listed game
    whose fill time (its deadline) has come, which starts it; its events (none when
    it is not time, or no player is seated: an empty table is left to leave the
    lobby)."""
    if (
        record.status != "waiting"
        or not record.listed
        or record.deadline is None
        or now < record.deadline
    ):
        return []
    record.deadline = None
    if not any(seat.name is not None and seat.bot is None for seat in record.seats):
        return []
    skills = seated_skills(store, record)
    level = level_for(fmean(skills.values()) if skills else None)
    events = []
    for seat in record.seats:
        if seat.is_joinable:
            seat.name, seat.bot = f"{level.capitalize()} bot", level
            events.append(
                Event("player_joined", {"seat": seat.seat, "name": seat.name, "bot": level})
            )
    return events + record.start_if_full()
