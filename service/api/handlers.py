"""Flask-free handlers returning a ``Response``,
called by the Flask views (:mod:`service.api.game_routes`) and by the fast lane
(:mod:`service.api.fastlane`): the public view, a seat's view and moves.

Each reads the request through :func:`service.api.context.call`, so neither
Flask's ``request`` nor a blueprint is needed here.
"""

from __future__ import annotations

import time
from functools import lru_cache

import orjson
from flask import Response

from service.api import metrics
from service.api.context import call, store
from service.api.media import require_json
from service.api.persistence import (
    Outcome,
    bearer_token,
    change,
    current,
    current_with_public,
    not_modified,
    public_events,
    require_seat,
    unauthorized,
)
from service.api.responses import json_response
from service.api.schemas.moves import load_move
from service.engine.moves import Move
from service.games import GameRecord
from service.record_format import saved_public_view, seat_part_for, with_seat_part
from service.store import GameNotFound
from service.tokens import hash_token


def public_view(game_id: str) -> Response:
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
    if not public or (deadline is not None and time.time() >= deadline):
        # an overdue turn is played first; a game saved without its public
        # view (by an older release) has it built from the document
        version, record = current(game_id)
        public = orjson.dumps(record.view(version))
    else:
        public = saved_public_view(public, results)
    unchanged = not_modified(version)
    if unchanged is not None:
        return unchanged
    return json_response(orjson.Fragment(public), version=version)


def player_view(game_id: str) -> Response:
    """``GET /v1/games/{id}/view``: the view of the seat holding the token (the
    public view saved with the game, plus the seat's part saved beside it).

    Read without the document when both were saved with the last change and no
    turn is overdue; anything else -- no or another token (401), an overdue
    turn, a game saved by an older release -- takes the document's way, which
    gives the same answers."""
    found = store().load_seat_view(game_id)
    if found is None:
        raise GameNotFound(game_id)
    version, deadline, public, results, parts = found
    token = bearer_token()
    if public and parts and token and (deadline is None or time.time() < deadline):
        part = seat_part_for(parts, version, hash_token(token))
        if part is not None:
            unchanged = not_modified(version)
            if unchanged is not None:
                return unchanged
            text = with_seat_part(saved_public_view(public, results), part)
            return json_response(orjson.Fragment(text), version=version)
    return _player_view_from_document(game_id)


def _player_view_from_document(game_id: str) -> Response:
    version, record, public = current_with_public(game_id)
    seat = require_seat(record)
    unchanged = not_modified(version)
    if unchanged is not None:
        return unchanged
    if not public:
        return json_response(record.view(version, seat), version=version)
    return json_response(orjson.Fragment(record.seat_view_json(public, seat)), version=version)


def make_move(game_id: str) -> Response:
    """``POST /v1/games/{id}/moves``: apply the move, answer the player's new view."""
    this_call = call()
    token = bearer_token(this_call)
    if this_call.services.limits is not None:  # rate limits on: every attempt counts
        this_call.services.limits.count_move(token, this_call.environ)
    if token is None:
        raise unauthorized("send Authorization: Bearer <token> for your seat")
    move = _move(this_call.body(), this_call.environ.get("CONTENT_TYPE"))

    def play(version: int, record: GameRecord) -> Outcome:
        seat = require_seat(record)
        events = record.play(seat, move, history=lambda: public_events(game_id))
        finished = record.status == "finished"

        def count() -> None:  # once saved: a move retried after a lost race counts once
            metrics.count_move(move.type)
            if finished:
                metrics.GAMES_FINISHED.inc()

        return Outcome(events, seat=seat, committed=count)

    return change(game_id, play, conditional=True)


MOVE_MEMO_MAX_BODY = 200  # bytes; a move is far shorter unless it lists melds


def _move(body: bytes, content_type: str | None) -> Move:
    """The move of a request's body (:func:`~service.api.schemas.moves.load_move`;
    415 when the body is not declared as JSON).

    Clients send the same few bodies over and over (``{"type":"draw",...}``, a
    discard of one of 53 cards), so short bodies found valid are memoized: the
    schema still decides every body, once.  (Measured: without the memo, moves
    lose 16% of their throughput.)"""
    require_json(content_type, len(body))
    if len(body) <= MOVE_MEMO_MAX_BODY:
        return _load_short_move(body)
    return load_move(body)


_load_short_move = lru_cache(maxsize=1024)(load_move)  # an invalid body raises: nothing cached
