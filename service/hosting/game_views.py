"""The views of a hosted game, built from its record: the public view (what
anyone may see) and a seat's view (the public one plus that seat's hand, legal
moves and arrangement), as dicts and as the JSON texts a move saves and answers.

In that order: the public view but its results, ``results``, then the seat's
part (:func:`~service.engine.view.seat_part`); the texts of :func:`move_texts`
and :func:`~service.hosting.document.with_results` rely on it.
"""

from __future__ import annotations

from typing import Any

import orjson

from service.engine.shuffle import commitment
from service.engine.view import empty_seat_part, observe, seat_part
from service.hosting.document import seat_parts_text, with_results
from service.hosting.record import GameRecord


def view(record: GameRecord, version: int, seat: int | None = None) -> dict[str, Any]:
    """The public view (``seat`` None) or a seat's view, with lobby details, ready
    for orjson (``results`` is pre-serialized JSON, see :func:`observe`)."""
    out = _public_view(record, version)
    out["results"] = orjson.Fragment(record.results_json())
    if seat is not None:
        out.update(_seat_part(record, seat))
    return out


def public_json(record: GameRecord, version: int) -> bytes:
    """The public view as saved beside the document: without its results, which
    :func:`with_results` adds when it is read."""
    return orjson.dumps(_public_view(record, version))


def move_texts(record: GameRecord, version: int, seat: int) -> tuple[bytes, bytes, bytes]:
    """The texts a move saves and answers, built in one pass: the public view as
    saved (:func:`public_json`), ``seat``'s view -- the public one with the
    results and the seat's part appended -- and every seat's part as saved
    (:func:`seat_parts_json`), ``seat``'s built once for both."""
    bare = public_json(record, version)
    part = orjson.dumps(_seat_part(record, seat))
    return (
        bare,
        with_results(bare, record.results_json(), part),
        seat_parts_json(record, version, (seat, part)),
    )


def seat_parts_json(
    record: GameRecord, version: int, ready: tuple[int, bytes] | None = None
) -> bytes:
    """Every seat's part of its view at ``version``, keyed by its token's hash
    (:func:`~service.hosting.document.seat_parts_text`), as saved beside the
    public view: a seat's view then needs neither the document nor the engine
    (``ready``: a seat's part built already).  Seats without a token (bots) have
    no view."""
    parts = []
    for seat in record.seats:
        if seat.token_hash is None:
            continue
        if ready is not None and ready[0] == seat.seat:
            part = ready[1]
        else:
            part = orjson.dumps(_seat_part(record, seat.seat))
        parts.append((seat.token_hash, part))
    return seat_parts_text(version, parts)


def _seat_part(record: GameRecord, seat: int) -> dict[str, Any]:
    if record.state is None:
        return empty_seat_part(seat)
    found = record.arrangement(seat)
    return seat_part(record.state, seat, known=found[1] if found is not None else None)


def _public_view(record: GameRecord, version: int) -> dict[str, Any]:
    if record.state is not None:
        out = observe(record.state, raw_results=True)
        del out["results"]  # stored apart, appended by view() and with_results()
    else:
        game = record.game
        out = {
            "status": "waiting",
            "options": record.options.to_dict(),
            "decks": game.decks,
            "rounds_total": len(game.rounds),
            "players": [{"seat": s.seat, "hand_size": 0, "total": 0} for s in record.seats],
            "round": None,
            "winners": None,
        }
    for player, seat_info in zip(out["players"], record.seats, strict=True):
        player["name"] = seat_info.name
        player["bot"] = seat_info.bot
        player["autopilot"] = seat_info.autopilot
        player["resigned"] = seat_info.resigned
    finished = record.status == "finished"
    out = {"id": record.id, "version": version, **out}
    out["status"] = record.status
    out["ruleset"] = record.ruleset
    out["listed"] = record.listed
    waiting = record.status == "waiting"
    out["open_seats"] = [s.seat for s in record.seats if s.is_joinable and waiting]
    out["timer"] = {
        "turn_timeout_seconds": record.turn_timeout,
        "autopilot_after_missed_turns": record.autopilot_after,
        "deadline": record.deadline,
    }
    out["rematch"] = {"of": record.rematch_of, "game": record.rematch_id}
    out["fairness"] = {
        "commitment": commitment(record.seed),
        "seed": record.seed if finished else None,
        "seeded": record.seeded,
    }
    return out
