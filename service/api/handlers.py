"""Flask-free handlers returning a ``Response``,
called by the Flask views (:mod:`service.api.game_routes`) and by the fast lane
(:mod:`service.api.fastlane`): the public view, a seat's view and moves.

Each reads the request through :func:`service.api.context.call`, so neither
Flask's ``request`` nor a blueprint is needed here.
"""

from __future__ import annotations

from functools import lru_cache

import orjson
from flask import Response

from service.api import metrics, presence
from service.api.auth import APP, request_holder, require_holder, require_seat
from service.api.changes import ChangeOutcome, change, current
from service.api.conditional import not_modified
from service.api.context import Call, call, store
from service.api.etags import etag
from service.api.media import require_json
from service.api.responses import json_response
from service.api.schemas.move_schemas import load_move
from service.engine.moves import Move
from service.hosting import app_listing
from service.hosting.document import seat_part_for, with_results, with_seat_part
from service.hosting.game_views import view
from service.hosting.record import GameRecord
from service.store import GameNotFound
from service.store.game_reads import LoadedGame, Read, Versioned, game_read, seat_view_read


def public_view(game_id: str) -> Response:
    """``GET /v1/games/{id}``: the public view saved with the last change.

    A conditional GET (a client polling) first reads only the version: a 304
    then costs no view's bytes; a changed game costs a second round trip.  The
    game's app (apps mode, its key) is answered :func:`app_view` instead."""
    found = call().identity
    if found is not None and found.kind == APP:
        return app_view(game_id)
    if call().header("If-None-Match"):
        known = store().load_version(game_id)
        if known is None:
            raise GameNotFound(game_id)
        version, _deadline = known
        unchanged = not_modified(version, known.last)
        if unchanged is not None:
            return unchanged
    found = store().load_public(game_id)
    if found is None:
        raise GameNotFound(game_id)
    version, _deadline, public, results = found
    last = found.last
    assert results is not None  # every write stores them with the version (new game: [])
    public = with_results(public, results)
    unchanged = not_modified(version, last)
    if unchanged is not None:
        return unchanged
    return json_response(orjson.Fragment(public), etag=etag(version, last))


def app_view(game_id: str) -> Response:
    """The public view as the game's app sees it: each seat's ``player_id`` too
    (read from the game's document)."""
    version, record, last = current(game_id)
    unchanged = not_modified(version, last)
    if unchanged is not None:
        return unchanged
    return json_response(app_listing.app_view(record, version), etag=etag(version, last))


def player_view(game_id: str) -> Response:
    """``GET /v1/games/{id}/view``: the view of the seat holding the token (the
    public view saved with the game, plus the seat's part saved beside it).

    Read without the document when both were saved with the last change;
    anything else -- no or another token (401) -- takes the document's way,
    which gives the same answers.  A read plays nothing: a due turn is a bot
    worker's (:mod:`service.botplay`)."""
    holder = request_holder()
    found, part = _saved_seat_part(game_id, holder)
    version, _deadline, public, results, _parts = found
    if part is None:
        return _player_view_from_document(game_id)
    assert holder is not None  # a part is found for a token only
    presence.note(call().services, game_id, holder, presence.of_public(public))
    assert results is not None  # every write stores them with the version (new game: [])
    unchanged = not_modified(version, found.last)
    if unchanged is not None:
        return unchanged
    text = with_seat_part(with_results(public, results), part)
    return json_response(orjson.Fragment(text), etag=etag(version, found.last))


def seat_held_by(game_id: str, holder: str) -> int | None:
    """The seat the token whose hash is ``holder`` holds in ``game_id`` now (None if
    none), from the seats' parts saved with the last change when they hold it (no
    document read), else from the game's record."""
    found, part = _saved_seat_part(game_id, holder)
    services = call().services
    if part is not None:
        presence.note(services, game_id, holder, presence.of_public(found[2]))
        return int(orjson.loads(part)["seat"])
    _version, record, _last = current(game_id)
    seat = record.seat_for_holder(holder)
    if seat is not None:
        presence.note(services, game_id, holder, presence.of_record(record))
    return seat


def player_view_read(current: Call, game_id: str) -> Read[Versioned | None]:
    """The read :func:`player_view` makes first (:attr:`Call.first_read`)."""
    return seat_view_read(game_id)


def move_read(current: Call, game_id: str) -> Read[LoadedGame | None] | None:
    """The read :func:`make_move` makes first (:attr:`Call.first_read`): the game's,
    unless the move sends an ``Idempotency-Key`` (read with the key's record)."""
    return None if current.header("Idempotency-Key") is not None else game_read(game_id)


def _saved_seat_part(game_id: str, holder: str | None) -> tuple[Versioned, bytes | None]:
    """What :meth:`GameStore.load_seat_view` read (404 without a game), and the part
    of the seat of the token whose hash is ``holder`` saved with the last change:
    None when there is none for it (then the document must be read)."""
    found = call().read(seat_view_read(game_id))
    if found is None:
        raise GameNotFound(game_id)
    version, _deadline, _public, _results, parts = found
    part = None
    if parts and holder:
        part = seat_part_for(parts, version, holder)
    return found, part


def _player_view_from_document(game_id: str) -> Response:
    version, record, last = current(game_id)
    seat = require_seat(record)
    holder = request_holder()
    assert holder is not None  # require_seat proved it
    presence.note(call().services, game_id, holder, presence.of_record(record))
    unchanged = not_modified(version, last)
    if unchanged is not None:
        return unchanged
    return json_response(view(record, version, seat), etag=etag(version, last))


def make_move(game_id: str) -> Response:
    """``POST /v1/games/{id}/moves``: apply the move, answer the player's new view."""
    this_call = call()
    require_holder()
    move = _move(this_call.body(), this_call.environ.get("CONTENT_TYPE"))

    def play(version: int, record: GameRecord) -> ChangeOutcome:
        seat = require_seat(record)
        events = record.play(seat, move)
        finished = record.status == "finished"

        def count() -> None:  # once saved: a move retried after a lost race counts once
            app = metrics.app_of(this_call.environ)
            metrics.count_move(move.type, app)
            if finished:
                metrics.GAMES_FINISHED.labels(app).inc()

        return ChangeOutcome(events, seat=seat, committed=count)

    return change(game_id, play, conditional=True, guard=require_seat)


MOVE_MEMO_MAX_BODY = 200  # bytes; a move is far shorter unless it lists melds


def _move(body: bytes, content_type: str | None) -> Move:
    """The move of a request's body (:func:`~service.api.schemas.move_schemas.load_move`;
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
