"""Fair and lively play: turn timers, autopilot seats, rematches, and replays
that prove the deals were fixed in advance.

Nothing here runs in the background: an overdue turn is played by the next
request that touches the game (:func:`apply_timeouts`), so any instance can do
it and no worker process is needed.
"""

from __future__ import annotations

import time
from typing import Any

from service import bots
from service.engine.errors import (
    EngineError,
    GameNotInProgressError,
    IllegalMoveError,
    InvalidOptionError,
)
from service.engine.moves import Discard, Draw, GoOut, Move, Source
from service.engine.records import Event
from service.engine.rules import Game, Options, card_points
from service.engine.shuffle import commitment, new_seed
from service.engine.state import Phase, State, legal_moves
from service.engine.view import observe
from service.hosting.bot_turns import History
from service.hosting.record import GameRecord, HostingError, Seat
from service.hosting.tokens import hash_token, new_token, rematch_game_id

AUTOPILOT_LEVEL = "basic"


class NotSeatedError(HostingError):
    code = "SEAT_NOT_RESERVED"


class SeatClaimedError(HostingError):
    code = "SEAT_ALREADY_CLAIMED"


class GameNotFinishedError(HostingError):
    code = "GAME_NOT_FINISHED"


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
    a bot.  A bot's turn is due at once when the last request left bots to play:
    then the next stretch of bot moves is played (``history`` as for a move)."""
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
    events = [_automatic(e, seat) for e in events]
    info = record.seats[seat]
    info.missed_turns += 1
    if record.autopilot_after is not None and info.missed_turns >= record.autopilot_after:
        events += _hand_to_bot(info, AUTOPILOT_LEVEL, "missed_turns")
    return events + record.after_turn(now)


def _automatic(event: Event, seat: int) -> Event:
    if event.data.get("seat") == seat and event.type in ("drew", "discarded", "went_out"):
        return Event(event.type, {**event.data, "automatic": True}, event.seat)
    return event


# -- autopilot ----------------------------------------------------------------------


def _hand_to_bot(seat: Seat, level: str, reason: str) -> list[Event]:
    seat.bot, seat.autopilot = level, True
    return [Event("autopilot_on", {"seat": seat.seat, "level": level, "reason": reason})]


def set_autopilot(record: GameRecord, seat: int, level: str | None) -> list[Event]:
    """Hand a human seat to a bot (``level``), or take it back (None)."""
    info = record.seats[seat]
    if level is None:
        if not info.autopilot:
            return []
        info.bot, info.autopilot, info.missed_turns = None, False, 0
        events = [Event("autopilot_off", {"seat": seat})]
        record.reset_deadline()
        return events
    if level not in bots.LEVELS:
        raise InvalidOptionError(
            f"unknown bot level {level!r}; expected one of {', '.join(bots.LEVELS)}",
            field="level",
        )
    events = _hand_to_bot(info, level, "player")
    if record.state is not None:
        events += record.after_turn()
    return events


# -- rematch ------------------------------------------------------------------------


def rematch_record(old: GameRecord) -> GameRecord:
    """A new game with the same seats, options and bots; human seats are reserved
    for the earlier game's players, who claim them with their old tokens."""
    if old.status != "finished":
        raise GameNotFinishedError("a rematch starts once the game is finished")
    seats = []
    for s in old.seats:
        if s.bot is not None and not s.autopilot:
            seats.append(Seat(s.seat, s.name, s.bot))
        else:
            seats.append(Seat(s.seat, s.name, reserved_for=s.token_hash))
    return GameRecord(
        id=rematch_game_id(old.id),
        ruleset=old.ruleset,
        options=old.options,
        seats=seats,
        seed=new_seed(),
        turn_timeout=old.turn_timeout,
        autopilot_after=old.autopilot_after,
        rematch_of=old.id,
    )


def claim_reserved(record: GameRecord, old_token: str) -> tuple[int, str, list[Event]]:
    """Claim the rematch seat reserved for the holder of ``old_token``."""
    digest = hash_token(old_token)
    for seat in record.seats:
        if seat.reserved_for == digest:
            token = new_token()
            seat.token_hash, seat.reserved_for = hash_token(token), None
            events = [Event("player_joined", {"seat": seat.seat, "name": seat.name, "bot": None})]
            return seat.seat, token, events + record._start_if_full()
    if any(s.token_hash is not None for s in record.seats):
        raise SeatClaimedError("your seat in the rematch was claimed already")
    raise NotSeatedError("no seat in this rematch is reserved for you")


# -- replays ------------------------------------------------------------------------


def build_replay(record: GameRecord, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The finished game's seed and every action, from its full event log."""
    if record.status != "finished" or record.state is None:
        raise GameNotFinishedError("the replay is published once the game is finished")
    actions: list[dict[str, Any]] = []
    deals: list[dict[str, Any]] = []
    for event in events:
        kind, private = event["type"], event.get("private", False)
        if kind == "round_started":
            deals.append({k: event[k] for k in ("round", "dealer", "discard_top")} | {"hands": {}})
        elif kind == "dealt":
            deals[-1]["hands"][str(event["seat"])] = event["hand"]
        elif kind == "drew" and not private:
            actions.append(_action(event, {"type": "draw", "source": event["source"]}))
        elif kind == "discarded":
            actions.append(_action(event, {"type": "discard", "card": event["card"]}))
        elif kind == "went_out":
            melds = [m["cards"] for m in event["melds"]]
            move = {"type": "go_out", "discard": event["discard"], "melds": melds}
            actions.append(_action(event, move))
        elif kind == "go_out_claim":
            actions.append(_action(event, event["move"]))
    state = record.state
    return {
        "id": record.id,
        "seed": record.seed,
        "commitment": commitment(record.seed),
        "players": len(record.seats),
        "options": record.options.to_dict(),
        "deals": deals,
        "actions": actions,
        "results": state.results.dicts(),
        "totals": list(state.totals),
        "winners": list(state.winners),
    }


def _action(event: dict[str, Any], move: dict[str, Any]) -> dict[str, Any]:
    out = {"seat": event["seat"], "move": move}
    if event.get("automatic"):
        out["automatic"] = True
    return out


def verify_replay(replay: dict[str, Any]) -> list[str]:
    """Re-simulate a replay with the engine; the list of discrepancies (empty:
    verified).  Checks the commitment, every deal, every move, every score."""
    problems: list[str] = []
    try:
        if commitment(replay["seed"]) != replay["commitment"]:
            problems.append("the seed does not match the published commitment")
        game = Game(replay["players"], Options.from_dict(replay["options"]))
        state, first = State.start(game, replay["seed"])
        deals = list(replay["deals"])
        produced = [first]
        for index, action in enumerate(replay["actions"]):
            try:
                produced.append(state.apply(action["seat"], Move.from_dict(action["move"])))
            except (IllegalMoveError, GameNotInProgressError) as exc:
                problems.append(f"action {index} ({action['move']}) is illegal: {exc.message}")
                break
        dealt = _deals_of([e for batch in produced for e in batch])
        if dealt != deals:
            problems.append("the deals differ from what the seed produces")
        if state.results.dicts() != replay["results"]:
            problems.append("the round results differ from the re-simulation")
        if state.totals != replay["totals"] or state.winners != replay["winners"]:
            problems.append("the totals or winners differ from the re-simulation")
        if state.round is not None:
            problems.append("the actions do not finish the game")
    except (KeyError, TypeError, ValueError, EngineError) as exc:
        problems.append(f"the replay is malformed: {exc}")
    return problems


def _deals_of(events: list[Event]) -> list[dict[str, Any]]:
    deals: list[dict[str, Any]] = []
    for event in events:
        if event.type == "round_started":
            data = event.data
            deals.append({k: data[k] for k in ("round", "dealer", "discard_top")} | {"hands": {}})
        elif event.type == "dealt":
            deals[-1]["hands"][str(event.data["seat"])] = event.data["hand"]
    return deals
