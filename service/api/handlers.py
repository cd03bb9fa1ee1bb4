"""Flask-free handlers returning an :class:`~service.api.answers.Answer`,
called by the Flask views (:mod:`service.api.games`) and by the fast lane
(:mod:`service.api.fastlane`): the public view, a seat's view and moves, with
the parsing of a move's body.

Each reads the request through :func:`service.api.context.call`, so neither
Flask's ``request`` nor a blueprint is needed here.
"""

from __future__ import annotations

import time
from functools import lru_cache

import orjson
from marshmallow import ValidationError

from service.api import metrics, schemas
from service.api.answers import Answer, json_answer, raw_json_answer
from service.api.auth import bearer_token, require_seat, require_token
from service.api.conditional import not_modified
from service.api.context import call, store
from service.api.media import require_json
from service.api.problems import ApiError
from service.api.writes import ChangeOutcome, change, current, public_events
from service.engine.moves import Move
from service.hosting.document import seat_part_for, with_results, with_seat_part
from service.hosting.game_views import view
from service.hosting.record import GameRecord
from service.hosting.tokens import hash_token
from service.store import GameNotFound


def public_view(game_id: str) -> Answer:
    """``GET /v1/games/{id}``: the public view saved with the last change.

    A conditional GET (a client polling) first reads only the version: a 304
    then costs no view's bytes; a changed game costs a second round trip."""
    if call().header("If-None-Match"):
        known = store().load_version(game_id)
        if known is None:
            raise GameNotFound(game_id)
        version, deadline = known
        if deadline is None or time.time() < deadline:
            unchanged = not_modified(version)
            if unchanged is not None:
                return unchanged
    found = store().load_public(game_id)
    if found is None:
        raise GameNotFound(game_id)
    version, deadline, public, results = found
    if deadline is not None and time.time() >= deadline:
        version, record = current(game_id)  # the overdue turn is played first
        public = orjson.dumps(view(record, version))
    else:
        public = with_results(public, results)
    unchanged = not_modified(version)
    if unchanged is not None:
        return unchanged
    return raw_json_answer(public, version=version)


def player_view(game_id: str) -> Answer:
    """``GET /v1/games/{id}/view``: the view of the seat holding the token (the
    public view saved with the game, plus the seat's part saved beside it).

    Read without the document when both were saved with the last change and no
    turn is overdue; anything else -- no or another token (401), an overdue
    turn -- takes the document's way, which gives the same answers."""
    found = store().load_seat_view(game_id)
    if found is None:
        raise GameNotFound(game_id)
    version, deadline, public, results, parts = found
    token = bearer_token()
    if parts and token and (deadline is None or time.time() < deadline):
        part = seat_part_for(parts, version, hash_token(token))
        if part is not None:
            unchanged = not_modified(version)
            if unchanged is not None:
                return unchanged
            text = with_seat_part(with_results(public, results), part)
            return raw_json_answer(text, version=version)
    return _player_view_from_document(game_id)


def _player_view_from_document(game_id: str) -> Answer:
    version, record = current(game_id)
    seat = require_seat(record)
    unchanged = not_modified(version)
    if unchanged is not None:
        return unchanged
    return json_answer(view(record, version, seat), version=version)


def make_move(game_id: str) -> Answer:
    """``POST /v1/games/{id}/moves``: apply the move, answer the player's new view."""
    this_call = call()
    if this_call.services.count_move is not None:  # rate limits on: every attempt counts
        this_call.services.count_move(this_call)
    require_token()
    move = _parse_move()

    def play(version: int, record: GameRecord) -> ChangeOutcome:
        seat = require_seat(record)
        events = record.play(seat, move, history=lambda: public_events(game_id))
        finished = record.status == "finished"

        def count() -> None:  # once saved: a move retried after a lost race counts once
            metrics.count_move(move.type)
            if finished:
                metrics.GAMES_FINISHED.inc()

        return ChangeOutcome(events, seat=seat, committed=count)

    return change(game_id, play, conditional=True)


# -- moves: the body of POST /v1/games/{id}/moves ----------------------------------

MOVE_LOADERS = {kind: schema() for kind, schema in schemas.MOVE_SCHEMAS.items()}


MOVE_MEMO_MAX_BODY = 200  # bytes; a move is far shorter unless it lists melds


def _parse_move() -> Move:
    """The request's move, validated by its schema (422 when invalid; 415 when
    the body is not declared as JSON).

    Clients send the same few bodies over and over (``{"type":"draw",...}``,
    a discard of one of 53 cards), so short bodies found valid are memoized:
    the schema still decides every body, once."""
    this_call = call()
    body = this_call.body()
    require_json(this_call.environ.get("CONTENT_TYPE"), len(body))
    if len(body) <= MOVE_MEMO_MAX_BODY:
        return _parse_short_move(body)
    return _parse_move_body(body)


@lru_cache(maxsize=1024)
def _parse_short_move(body: bytes) -> Move:
    return _parse_move_body(body)  # an invalid body raises: nothing is cached


def _parse_move_body(body: bytes) -> Move:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ApiError("INVALID_JSON", "the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise ApiError(
            "VALIDATION_ERROR",
            "a move is a JSON object",
            errors={"_schema": ["expected an object"]},
        )
    kind = data.get("type")
    schema = MOVE_LOADERS.get(kind) if isinstance(kind, str) else None
    if schema is None:
        raise ApiError(
            "VALIDATION_ERROR",
            "unknown move type; expected draw, discard or go_out",
            errors={"type": ["must be one of: draw, discard, go_out"]},
        )
    try:
        schema.load(data)
    except ValidationError as exc:
        raise ApiError(
            "VALIDATION_ERROR", "some fields are invalid; see errors", errors=exc.messages
        ) from None
    return Move.from_dict(data)
