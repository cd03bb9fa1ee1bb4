"""Rematches, and replays that prove the deals were fixed in advance: a finished
game publishes its seed and every action, and anyone can play them again with
the engine (:func:`verify_replay`, the ``three-thirteen-verify`` command)."""

from __future__ import annotations

from typing import Any

from service.engine.errors import EngineError, GameNotInProgressError, IllegalMoveError
from service.engine.moves import Move
from service.engine.options import Options
from service.engine.rules import Game
from service.engine.shuffle import commitment, new_seed
from service.engine.state import State
from service.hosting.record import GameRecord, Seat
from service.hosting.refusals import GameNotFinishedError
from service.hosting.tokens import rematch_game_id

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
            seats.append(Seat(s.seat, s.name, reserved_for=s.token_hash, player_id=s.player_id))
    return GameRecord(
        id=rematch_game_id(old.id),
        ruleset=old.ruleset,
        options=old.options,
        seats=seats,
        seed=new_seed(),
        turn_timeout=old.turn_timeout,
        autopilot_after=old.autopilot_after,
        rematch_of=old.id,
        webhook=old.webhook,
    )


# -- replays ------------------------------------------------------------------------


def build_replay(record: GameRecord, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The finished game's seed and every action, from its full event log."""
    if record.status != "finished" or record.state is None:
        raise GameNotFinishedError("the replay is published once the game is finished")
    actions: list[dict[str, Any]] = []
    for event in events:
        kind, private = event["type"], event.get("private", False)
        if kind == "drew" and not private:
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
        "deals": deals_of(events),
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
        dealt = deals_of([e.to_dict() for batch in produced for e in batch])
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


def deals_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every deal of a game's events (as the events endpoint shows them): the
    round, its dealer, the first discard and every seat's hand dealt."""
    deals: list[dict[str, Any]] = []
    for event in events:
        if event["type"] == "round_started":
            deals.append({k: event[k] for k in ("round", "dealer", "discard_top")} | {"hands": {}})
        elif event["type"] == "dealt":
            deals[-1]["hands"][str(event["seat"])] = event["hand"]
    return deals
