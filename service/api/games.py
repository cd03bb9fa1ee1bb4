"""Games over HTTP: create, join, views, moves and events.

Each handler loads the game, calls one operation of :mod:`service.games` (which
calls the engine), saves, and dumps the answer.  Errors are mapped to
problem+json by :mod:`service.api.problems`.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import orjson
from flask import Response, request, url_for
from flask.views import MethodView
from marshmallow import ValidationError

from service.api import metrics, schemas
from service.api.answers import Answer, json_answer, raw_json_answer
from service.api.blueprint import Blueprint
from service.api.context import call, services, store
from service.api.persistence import (
    Idempotency,
    Outcome,
    bearer_token,
    change,
    current,
    current_with_public,
    events_payload,
    idempotency,
    json_response,
    not_modified,
    replay,
    require_seat,
    saved_answer,
    snapshot,
    unauthorized,
)
from service.api.problems import ApiError
from service.creation import create_record
from service.engine.moves import Move
from service.games import GameRecord
from service.record_format import saved_public_view, seat_part_for
from service.store import GameExists, GameNotFound
from service.tokens import hash_token

blp = Blueprint(
    "games", __name__, url_prefix="/v1/games", description="Create, join and play games"
)

ERRORS_READ = {404: "Unknown game", 503: "Storage unavailable"}
ERRORS_PLAYER = {**ERRORS_READ, 401: "Missing or invalid token"}


PROBLEM_CONTENT = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}


def _document_errors(blueprint: Blueprint, codes: dict[int, str]) -> Any:
    """Document error answers (problem+json) without wrapping the view: unlike
    ``alt_response`` this adds no per-request cost."""
    return blueprint.doc(
        responses={
            str(status): {"description": description, "content": PROBLEM_CONTENT}
            for status, description in codes.items()
        }
    )


@blp.route("")
class Games(MethodView):
    @blp.doc(operationId="createGame")
    @blp.arguments(schemas.CreateGameIn)
    @blp.response(201, schemas.CreateGameOut)
    @_document_errors(
        blp,
        {
            400: "Malformed JSON",
            422: "Invalid players, seats or options",
            429: "Rate limited",
            503: "Storage unavailable",
        },
    )
    def post(self, body: dict[str, Any]) -> Response:
        """Create a game

        Seats listed in `players` are taken now (a token is returned for each
        human seat, once); the rest stay open for `POST /v1/games/{id}/players`.
        Round 1 is dealt as soon as every seat is taken.
        """
        idem = idempotency("create")
        if idem is not None:
            earlier = store().creation_record(idem.key_hash)
            if earlier is not None:
                return _replay_creation(idem, earlier)
        record, tokens, events = create_record(
            body["players"],
            body.get("seats"),
            body["ruleset"],
            body["options"],
            body.get("seed"),
            services().config.allow_seeded_games,
            body.get("turn_timeout_seconds"),
            body.get("autopilot_after_missed_turns"),
        )
        out = {
            "id": record.id,
            "version": 1,
            "status": record.status,
            "seeded": record.seeded,
            "players": [
                {"seat": s.seat, "name": s.name, "bot": s.bot}
                | ({"token": tokens[s.seat]} if s.seat in tokens else {})
                for s in record.seats
                if not s.is_open
            ],
        }
        headers = {"Location": url_for("games.Game", game_id=record.id)}
        doc, payload = record.to_bytes(), events_payload(events)
        if idem is not None:
            saved = saved_answer(
                idem,
                201,
                out,
                1,
                headers=headers,
                fingerprint=idem.fingerprint.hex(),
                game_id=record.id,
                doc=doc.decode(),
                events=[[e.decode(), seat] for e, seat in payload],
            )
            if not store().save_creation_record(idem.key_hash, saved):
                return _replay_creation(idem, store().creation_record(idem.key_hash) or saved)
        if idem is None:
            store().create(record.id, doc, payload, **snapshot(record, 1))
        else:
            _create_recorded(record, doc, payload)
        metrics.GAMES_CREATED.inc()
        return json_response(out, 201, version=1, headers=headers)


def _replay_creation(idem: Idempotency, raw: bytes) -> Response:
    """Answer a retried creation; create the game now if the first attempt
    saved its record but died before creating it."""
    saved = orjson.loads(raw)
    fingerprint = bytes.fromhex(saved["fingerprint"])
    if fingerprint == idem.fingerprint and store().load(saved["game_id"]) is None:
        doc = saved["doc"].encode()
        events = [(e.encode(), seat) for e, seat in saved["events"]]
        # a game being created has no results yet (a format 1 document holds its own)
        _create_recorded(GameRecord.from_bytes(doc, b"[]"), doc, events)
    return replay(idem, fingerprint, raw).response()


def _create_recorded(
    record: GameRecord, doc: bytes, events: list[tuple[bytes, int | None]]
) -> None:
    """Create the game of a saved creation record.  The first attempt and its
    retries may race to do it; the id is the record's own, so a game already
    there is this one, made from the same document."""
    try:
        store().create(record.id, doc, events, **snapshot(record, 1))
    except GameExists:
        pass


@blp.route("/<game_id:game_id>")
class Game(MethodView):
    @blp.doc(operationId="getGame")
    @blp.response(200, schemas.GameView)
    @blp.alt_response(304, description="Not modified (If-None-Match)")
    @_document_errors(blp, ERRORS_READ)
    def get(self, game_id: str) -> Response:
        """Public view of a game

        Everything a spectator may see: no card held in any hand, nothing about
        the stock's order. Supports `If-None-Match` (304).
        """
        return public_view(game_id).response()


@blp.route("/<game_id:game_id>/view")
class PlayerViewResource(MethodView):
    @blp.doc(operationId="getPlayerView", security=[{"bearer": []}])
    @blp.response(200, schemas.PlayerView)
    @blp.alt_response(304, description="Not modified (If-None-Match)")
    @_document_errors(blp, ERRORS_PLAYER)
    def get(self, game_id: str) -> Response:
        """A seat's view

        The public view plus the seat's hand, its legal moves and the best
        arrangement of its hand. Needs the seat's bearer token.
        """
        return player_view(game_id).response()


@blp.route("/<game_id:game_id>/players")
class Players(MethodView):
    @blp.doc(operationId="joinGame")
    @blp.arguments(schemas.JoinIn)
    @blp.response(201, schemas.JoinOut)
    @_document_errors(
        blp, {**ERRORS_READ, 409: "No open seat", 422: "Invalid name", 429: "Rate limited"}
    )
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Take an open seat

        Returns the seat and its bearer token (shown only this once).
        """

        def join(version: int, record: GameRecord) -> Outcome:
            seat, token, events = record.join(body["name"])

            def build(new_version: int) -> tuple[int, Any]:
                out = {
                    "seat": seat,
                    "token": token,
                    "version": new_version,
                    "status": record.status,
                }
                return 201, out

            return Outcome(events, build)

        return change(game_id, join).response()


MOVE_LOADERS = {kind: schema() for kind, schema in schemas.MOVE_SCHEMAS.items()}


MOVE_MEMO_MAX_BODY = 200  # bytes; a move is far shorter unless it lists melds


def _parse_move() -> Move:
    """The request's move, validated by its schema (422 when invalid).

    Clients send the same few bodies over and over (``{"type":"draw",...}``,
    a discard of one of 53 cards), so short bodies found valid are memoized:
    the schema still decides every body, once."""
    body = call().body()
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
    schema = MOVE_LOADERS.get(data.get("type"))  # type: ignore[arg-type]
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


MOVE_BODY = {
    "required": True,
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Move"}}},
}


@blp.route("/<game_id:game_id>/moves")
class Moves(MethodView):
    @blp.doc(requestBody=MOVE_BODY)
    @blp.response(200, schemas.PlayerView)
    @_document_errors(
        blp,
        {
            **ERRORS_PLAYER,
            400: "Malformed JSON",
            409: "Not your turn, wrong phase, or game not in progress",
            412: "If-Match names a stale version",
            422: "Invalid or illegal move",
            429: "Rate limited",
        },
    )
    @blp.doc(operationId="makeMove", security=[{"bearer": []}])
    def post(self, game_id: str) -> Response:
        """Make a move

        The body is one move (`draw`, `discard` or `go_out`). Send
        `If-Match: "<version>"` to act only on the version you saw, and
        `Idempotency-Key` to make retries safe. Answers with your new view.
        """
        return make_move(game_id).response()


# -- the hot handlers: also answered by the fast lane (service.api.fastlane) -------


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
    return raw_json_answer(public, version=version)


def player_view(game_id: str) -> Answer:
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
            text = saved_public_view(public, results)
            return raw_json_answer(text[:-1] + b"," + part[1:], version=version)
    return _player_view_from_document(game_id)


def _player_view_from_document(game_id: str) -> Answer:
    version, record, public = current_with_public(game_id)
    seat = require_seat(record)
    unchanged = not_modified(version)
    if unchanged is not None:
        return unchanged
    if not public:
        return json_answer(record.view(version, seat), version=version)
    return raw_json_answer(record.seat_view_json(public, seat), version=version)


def make_move(game_id: str) -> Answer:
    """``POST /v1/games/{id}/moves``: apply the move, answer the player's new view."""
    current = call()
    if current.services.count_move is not None:  # rate limits on: every attempt counts
        current.services.count_move(current)
    if bearer_token() is None:
        raise unauthorized("send Authorization: Bearer <token> for your seat")
    move = _parse_move()

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


def public_events(game_id: str) -> list[dict[str, Any]]:
    """Every public event of a game (for bots that track the cards)."""
    return [orjson.loads(raw) for _seq, raw in store().all_events(game_id)]


@blp.route("/<game_id:game_id>/events")
class Events(MethodView):
    @blp.doc(operationId="listEvents", security=[{}, {"bearer": []}])
    @blp.arguments(schemas.EventsQuery, location="query")
    @blp.response(200, schemas.EventsOut)
    @_document_errors(blp, ERRORS_PLAYER)
    def get(self, query: dict[str, Any], game_id: str) -> Response:
        """Events of a game

        Events with `seq` > `after`, oldest first. With `wait` (seconds, at
        most 30) the request waits until an event arrives. A seat's bearer
        token adds the events private to that seat.
        """
        seat = None
        deadline = None
        if request.headers.get("Authorization"):
            _version, record = current(game_id)
            seat = require_seat(record)
            deadline = record.deadline
        wait = min(query["wait"], services().config.long_poll_max_seconds)
        if deadline is not None:
            wait = max(0.0, min(wait, deadline - time.time() + 0.05))
        found, last_seq = store().events(game_id, query["after"], seat, wait)
        if not found and deadline is not None and time.time() >= deadline:
            current(game_id)  # the turn timed out while we waited: play it now
            found, last_seq = store().events(game_id, query["after"], seat, 0)
        events = [{"seq": seq, **orjson.loads(raw)} for seq, raw in found]
        return json_response({"events": events, "last_seq": last_seq})
