"""Turn timers and autopilot seats: an overdue turn is played for its player,
and a player who keeps missing turns has the seat handed to a bot (as one may
hand it over, and take it back, at will).

An overdue turn -- a turn timer run out, or a bot's turn, due at once -- is
played by a bot worker (:func:`apply_timeouts`, the step of
:mod:`service.hosting.due_turns`), never by a request.
"""

from __future__ import annotations

import time

from service.engine.game_events import Event
from service.engine.moves import Discard, Draw, GoOut, Move, Source
from service.engine.rounds import Phase
from service.engine.rules import card_points
from service.engine.state import State, legal_moves
from service.engine.view import observe
from service.hosting.bot_turns import History, check_bot_level, marked
from service.hosting.record import GameRecord, Seat
from service.hosting.refusals import ResignedError

AUTOPILOT_LEVEL = "basic"


# -- turn timers ------------------------------------------------------------------


def is_overdue(record: GameRecord, now: float) -> bool:
    return record.deadline is not None and record.status == "playing" and now >= record.deadline


def automatic_draw(state: State, seat: int) -> Move:
    """Draw from the stock, or from the discard when the stock is unavailable."""
    draws = [m for m in legal_moves(state, seat) if isinstance(m, Draw)]
    stock = [m for m in draws if m.source is Source.STOCK]
    return (stock or draws)[0]


def automatic_finish(state: State, seat: int) -> Move:
    """Go out if possible, else discard the costliest deadwood card."""
    legal = legal_moves(state, seat)
    for move in legal:
        if isinstance(move, GoOut):
            return move
    spec = state.spec
    options = state.game.options
    discards = [m for m in legal if isinstance(m, Discard)]
    deadwood = set(observe(state, seat)["arrangement"]["deadwood"])
    pool = [m for m in discards if m.card.code in deadwood] or discards
    return max(pool, key=lambda m: (card_points(m.card, spec.wild_rank, options), m.card.id))


def apply_timeouts(
    record: GameRecord, now: float | None = None, history: History | None = None
) -> list[Event]:
    """Play the overdue turn, if any, marking its events automatic: draw from
    the stock, then go out if possible, else discard the costliest deadwood
    card.  After ``autopilot_after`` missed turns in a row the seat is handed to
    a bot.  A bot's turn is due at once: then the next stretch of bot moves is
    played (``history`` loads the game's stored public events, for the bots that
    track the cards)."""
    now = time.time() if now is None else now
    if not is_overdue(record, now):
        return []
    if record.bot_on_turn:
        return record.after_turn(now, history)
    state = record.state
    assert state is not None and state.round is not None
    seat = state.round.turn
    events: list[Event] = []
    if state.round.phase is Phase.DRAW:
        events += state.apply(seat, automatic_draw(state, seat))
    events += state.apply(seat, automatic_finish(state, seat))
    events = marked(events, seat, "automatic")
    info = record.seats[seat]
    info.missed_turns += 1
    if record.autopilot_after is not None and info.missed_turns >= record.autopilot_after:
        events += _hand_to_bot(info, AUTOPILOT_LEVEL, "missed_turns")
    record.reset_deadline(now)  # the next seat's turn: a bot's is due at once
    return events


# -- autopilot ----------------------------------------------------------------------


def _hand_to_bot(seat: Seat, level: str, reason: str) -> list[Event]:
    seat.bot, seat.autopilot = level, True
    return [Event("autopilot_on", {"seat": seat.seat, "level": level, "reason": reason})]


def set_autopilot(record: GameRecord, seat: int, level: str | None) -> list[Event]:
    """Hand a human seat to a bot (``level``), or take it back (None)."""
    info = record.seats[seat]
    if info.resigned:
        raise ResignedError("you resigned: a bot plays this seat to the end of the game")
    if level is None:
        if not info.autopilot:
            return []
        info.bot, info.autopilot, info.missed_turns = None, False, 0
        events = [Event("autopilot_off", {"seat": seat})]
        record.reset_deadline()
        return events
    check_bot_level(level, "level")
    if info.autopilot and info.bot == level:
        return []  # on already, at that level: nothing changes
    events = _hand_to_bot(info, level, "player")
    if record.state is not None:
        record.reset_deadline()  # its bot's turn, if it is on turn: due at once
    return events
