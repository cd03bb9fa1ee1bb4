"""Games over HTTP: create, join, views, moves and events.

Each handler parses the request, calls :mod:`service.hosting` with the app's
store and config (which loads, calls the engine and saves), and dumps the
answer.  The hot ones (the views and moves) are answered by
:mod:`service.api.handlers`, which the fast lane calls too.  Errors are mapped
to problem+json by :mod:`service.api.problems`.  Their paths, rate limits and
the fast lane's handlers are declared by the route table
(:mod:`service.api.routes`).
"""

from __future__ import annotations

import secrets
from typing import Any

from flask import Response, request, url_for
from flask.views import MethodView

from service.api import event_frames, following, handlers, identities, metrics
from service.api.auth import require_holder, require_seat
from service.api.blueprint import ERRORS_PLAYER, ERRORS_READ, Blueprint, document_errors
from service.api.changes import ChangeOutcome, change, current
from service.api.context import address, config, lobby_hold, services, store
from service.api.etags import etag
from service.api.idempotency import idempotency, replay
from service.api.responses import json_response
from service.api.schemas import inputs, outputs, views
from service.api.schemas.headers import headers, parameters
from service.api.schemas.move_schemas import MOVE_EXAMPLES
from service.hosting import game_creation, lobby_listing, seating
from service.hosting.record import GameRecord
from service.store import IdempotentReplay

blp = Blueprint(
    "games", __name__, url_prefix="/v1/games", description="Create, join and play games"
)


class Games(MethodView):
    @blp.doc(operationId="createGame", parameters=parameters("Idempotency-Key"))
    @blp.arguments(inputs.CreateGameIn(), example=inputs.CREATE_GAME_EXAMPLE)
    @blp.response(
        201, outputs.CreateGameOut, headers=headers("ETag", "Location", "Idempotent-Replayed")
    )
    @document_errors(
        blp,
        {
            400: "Malformed JSON, or a weak Idempotency-Key",
            422: "Invalid players, seats, options or webhook URL",
            429: "Rate limited, over the address's lobby limit (a listed game), or over a "
            "limit of the app (apps mode: creates a minute, concurrent games)",
            503: "Storage unavailable",
        },
        "INVALID_JSON",
        "WEAK_IDEMPOTENCY_KEY",
        "VALIDATION_ERROR",
        "INVALID_OPTION",
        "WEBHOOK_URL_REFUSED",
        "IDEMPOTENCY_KEY_REUSED",
        "RATE_LIMITED",
        "APP_LIMIT_EXCEEDED",
    )
    def post(self, body: dict[str, Any]) -> Response:
        """Create a game

        Seats listed in `players` are taken now (a token is returned for each
        human seat, once); the rest stay open for `POST /v1/games/{id}/players`.
        Round 1 is dealt as soon as every seat is taken.
        """
        app = identities.acting_app()
        players, bound = identities.with_holders(body["players"])
        idem = idempotency("create", secret=True)
        if idem is not None:  # a retry finds the game its key made, and the answer
            earlier = game_creation.earlier_answer(store(), idem, app)
            if earlier is not None:
                return replay(idem, *earlier)
        try:
            created = game_creation.create(
                store(),
                config(),
                {**body, "players": players},
                idem,
                address=address(),
                location=_game_url,
                app=app,
            )
        except IdempotentReplay as first:  # a retry of this very request made it meanwhile
            assert idem is not None
            return replay(idem, first.fingerprint, first.response, first.last)
        metrics.GAMES_CREATED.labels(metrics.app_of(request.environ)).inc()
        identities.note_seated(created.body["id"], bound)
        return json_response(created.body, 201, etag=etag(1, created.last), headers=created.headers)


def _game_url(game_id: str) -> str:
    return url_for("games.Game", game_id=game_id)


class Game(MethodView):
    @blp.doc(operationId="getGame", parameters=parameters("If-None-Match"))
    @blp.response(200, views.GameView, headers=headers("ETag"))
    @blp.alt_response(304, description="Not modified (If-None-Match)", headers=headers("ETag"))
    @document_errors(blp, ERRORS_READ)
    def get(self, game_id: str) -> Response:
        """Public view of a game

        Everything a spectator may see: no card held in any hand, nothing about
        the stock's order. Supports `If-None-Match` (304).
        """
        return handlers.public_view(game_id)


class PlayerViewResource(MethodView):
    @blp.doc(
        operationId="getPlayerView",
        parameters=parameters("If-None-Match"),
    )
    @blp.response(200, views.PlayerView, headers=headers("ETag"))
    @blp.alt_response(304, description="Not modified (If-None-Match)", headers=headers("ETag"))
    @document_errors(blp, ERRORS_PLAYER)
    def get(self, game_id: str) -> Response:
        """A seat's view

        The public view plus the seat's hand, its legal moves and the best
        arrangement of its hand. Needs the seat's bearer token.
        """
        return handlers.player_view(game_id)


class Players(MethodView):
    @blp.doc(operationId="joinGame", parameters=parameters("Idempotency-Key"))
    @blp.arguments(inputs.JoinIn(), example={"name": "cy"})
    @blp.response(201, outputs.JoinOut, headers=headers("ETag", "Idempotent-Replayed"))
    @document_errors(
        blp,
        {
            **ERRORS_READ,
            400: "Malformed JSON, or a weak Idempotency-Key",
            409: "No open seat, the seat asked for is taken, or the game was cancelled",
            422: "Invalid name or seat",
            429: "Rate limited, or over the address's lobby limit (a listed game)",
        },
        "INVALID_JSON",
        "WEAK_IDEMPOTENCY_KEY",
        "GAME_FULL",
        "SEAT_TAKEN",
        "GAME_CANCELLED",
        "VALIDATION_ERROR",
        "NO_SUCH_SEAT",
        "IDEMPOTENCY_KEY_REUSED",
    )
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Take an open seat

        The `seat` asked for, or the lowest open one. Returns the seat and
        its bearer token (shown only this once).
        """

        hold = lobby_hold()
        holder, player_id = identities.holder_for(body.get("player_id"))

        def join(version: int, record: GameRecord) -> ChangeOutcome:
            seat, token, events = seating.join(
                record, body["name"], body.get("seat"), holder, player_id
            )
            hold.take_seat(record, seat)  # 429 over the address's cap (a listed game)

            def build(new_version: int) -> tuple[int, Any]:
                out = {
                    "seat": seat,
                    "version": new_version,
                    "status": record.status,
                }
                if token is not None:
                    out["token"] = token
                if player_id is not None:
                    out["player_id"] = player_id
                return 201, out

            def committed() -> None:
                lobby_listing.seats_changed(store(), config(), record)
                identities.note_seated(game_id, [] if player_id is None else [player_id])

            return ChangeOutcome(events, build, committed=committed)

        try:
            return change(game_id, join)
        except BaseException:
            hold.release()
            raise


TICKET_BYTES = 24
"""Random bytes of a stream ticket (32 characters of URL-safe base64)."""

MOVE_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {"$ref": "#/components/schemas/Move"},
            # what /docs "Try it out" sends: valid at the start of any turn. One
            # example only: OpenAPI 3.0 forbids `example` beside `examples`, so each
            # move type's example is on its own schema (DrawMove, DiscardMove...).
            "example": MOVE_EXAMPLES["draw"],
        }
    },
}


class Moves(MethodView):
    @blp.doc(requestBody=MOVE_BODY)
    @blp.response(200, views.PlayerView, headers=headers("ETag", "Idempotent-Replayed"))
    @document_errors(
        blp,
        {
            **ERRORS_PLAYER,
            400: "Malformed JSON",
            409: "Not your turn, wrong phase, or game not in progress",
            412: "If-Match names a stale version, or a history the game no longer has",
            422: "Invalid or illegal move",
            429: "Rate limited, or over a limit of the app or the player (apps mode)",
        },
        "NOT_YOUR_TURN",
        "PRECONDITION_FAILED",
        "HISTORY_DIVERGED",
        "WRONG_PHASE",
        "GAME_NOT_IN_PROGRESS",
        "VALIDATION_ERROR",
        "CARD_NOT_IN_HAND",
        "IDEMPOTENCY_KEY_REUSED",
        "RATE_LIMITED",
        "APP_LIMIT_EXCEEDED",
    )
    @blp.doc(
        operationId="makeMove",
        parameters=parameters("If-Match", "Idempotency-Key"),
    )
    def post(self, game_id: str) -> Response:
        """Make a move

        The body is one move (`draw`, `discard` or `go_out`). Send
        `If-Match: "<version>"` to act only on the version you saw, and
        `Idempotency-Key` to make retries safe. Answers with your new view.
        """
        return handlers.make_move(game_id)


EVENT_STREAMS = {
    event_frames.SSE: {
        "schema": {"type": "string"},
        "example": 'retry: 2000\n\nid: 8\nevent: drew\ndata: {"seq":8,"type":"drew",'
        '"seat":1,"source":"stock"}\n\n: keep-alive\n\n',
    },
    event_frames.NDJSON: {
        "schema": {"type": "string"},
        "example": '\n{"seq":8,"type":"drew","seat":1,"source":"stock"}\n\n',
    },
}
"""The streams ``listEvents`` answers with when ``Accept`` asks for them."""

EVENTS_200 = {
    "description": "The events: a page (JSON). With `Accept: text/event-stream` or "
    "`application/x-ndjson`, a stream instead (`x-streams`; docs/API.md)",
    "content": {event_frames.JSON: {"schema": {"$ref": "#/components/schemas/EventsOut"}}},
    # The streams are an extension, not `content`: generators type an answer as the
    # union of its media types, so a generated client would read the JSON page as
    # `EventsOut | string`. A stream is not something they can read anyway.
    "x-streams": EVENT_STREAMS,
}


class Events(MethodView):
    @blp.doc(operationId="listEvents")
    @blp.arguments(following.EVENTS_QUERY, location="query")
    @blp.arguments(following.EVENTS_HEADERS, location="headers")
    @blp.response(200, outputs.EventsOut)
    @blp.doc(responses={"200": EVENTS_200})
    @document_errors(
        blp,
        {
            **ERRORS_PLAYER,
            406: "Accept names none of the answer's media types",
            429: "Too many open streams from this address or on this seat",
        },
        "TOO_MANY_STREAMS",
    )
    def get(self, query: dict[str, Any], headers: dict[str, Any], game_id: str) -> Response:
        """Events of a game

        Events with `seq` > `after`, oldest first. As JSON (the default), one
        page; with `wait` (seconds, at most 30) the request waits until an
        event arrives. With `Accept: text/event-stream` (Server-Sent Events)
        or `application/x-ndjson`, a stream of them as they happen, with
        heartbeats, resumed with `Last-Event-ID`. A seat's bearer token, or a
        stream ticket, adds the events private to that seat (in `AUTH_MODE=open`
        neither is needed: without, the public events). A client
        address, and a seat, may hold only so many streams and waiting long
        polls open at once: beyond, 429 `TOO_MANY_STREAMS` with `Retry-After`.
        """
        asked = following.events_request(query, headers, request.accept_mimetypes)
        return following.follow(game_id, *asked)


class StreamTickets(MethodView):
    @blp.doc(operationId="createStreamTicket")
    @blp.response(201, outputs.StreamTicketOut)
    @document_errors(blp, {**ERRORS_PLAYER, 429: "Rate limited"})
    def post(self, game_id: str) -> Response:
        """Get a stream ticket

        A ticket proving your seat for `GET /v1/games/{id}/events?ticket=...`,
        for clients that cannot send an `Authorization` header (a browser's
        `EventSource`): your token stays out of URLs and logs. It opens your
        seat's stream of this game as often as asked (the browser's own
        reconnects included) while your token holds the seat: within
        `expires_in` seconds of its issue or of its last use, and an open
        stream renews it. It is refused (401) once the seat changed hands.
        """
        holder = require_holder()
        _version, record, _last = current(game_id)
        seat = require_seat(record)
        ticket = secrets.token_urlsafe(TICKET_BYTES)
        seconds = services().config.stream_ticket_seconds
        store().issue_ticket(game_id, ticket, seat, holder, seconds)
        return json_response({"ticket": ticket, "expires_in": seconds}, 201)
