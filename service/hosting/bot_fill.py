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

The bots' level is the one whose fixed rating (its anchor in the ratings,
:data:`~service.hosting.rating_updates.BOT_ANCHORS`) is nearest the seated players'
mean skill (rating ``mu``, :func:`level_for`): a bot of a similar rating.
"""

from __future__ import annotations

from statistics import fmean

from service.engine.game_events import Event
from service.hosting.rating_updates import BOT_ANCHORS
from service.hosting.record import GameRecord
from service.hosting.skill_window import seated_skills
from service.store import GameStore

FILL_LEVELS = ("basic", "strong", "expert")
"""The levels a table is filled with (``random`` is no opponent for anyone)."""


def level_for(skill: float | None) -> str:
    """The level of :data:`FILL_LEVELS` whose anchor's ``mu`` is nearest ``skill``, the
    mean of a table's players' (None: no rated player, ``basic``, a new player's).

    >>> level_for(None), level_for(25.0), level_for(27.0), level_for(40.0)
    ('basic', 'basic', 'strong', 'expert')
    """
    if skill is None:
        return "basic"
    return min(FILL_LEVELS, key=lambda level: abs(BOT_ANCHORS[level][0] - skill))


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
