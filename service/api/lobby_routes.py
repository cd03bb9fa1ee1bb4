"""The lobby over HTTP: the listing of games, quick-join, and a player's own
seat (rename and leave before the start, resign during play)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from flask import Response, request, url_for
from flask.views import MethodView
from marshmallow import RAISE

from service.api import identities
from service.api.auth import require_seat, require_token
from service.api.blueprint import ERRORS_PLAYER, Blueprint, document_errors
from service.api.changes import ChangeOutcome, change
from service.api.context import address, config, store
from service.api.etags import etag
from service.api.idempotency import idempotency, replay
from service.api.responses import json_response
from service.api.schemas import lobby_schemas as schemas
from service.api.schemas import views
from service.api.schemas.headers import headers, parameters
from service.engine.game_events import Event
from service.hosting import lobby_caps, lobby_listing, lobby_operations, matchmaking
from service.hosting.record import GameRecord
from service.hosting.tokens import app_of_game
from service.store import IdempotentReplay

blp = Blueprint(
    "lobby", __name__, url_prefix="/v1", description="Find a game: list, quick-join, leave, resign"
)


class Listing(MethodView):
    @blp.doc(operationId="listGames")
    @blp.arguments(schemas.ListingQuery(), location="query", unknown=RAISE)
    @blp.response(200, schemas.ListingOut, headers=headers("Link"))
    @document_errors(
        blp,
        {
            422: "Invalid filter or cursor",
            429: "Rate limited, or over the app's listings a minute (apps mode)",
            503: "Storage unavailable",
        },
        "VALIDATION_ERROR",
        "RATE_LIMITED",
        "APP_LIMIT_EXCEEDED",
        "STORE_UNAVAILABLE",
    )
    def get(self, query: dict[str, Any]) -> Response:
        """List listed games

        Games created with `listed: true`, of one `status` (default
        `waiting`), optionally of one `ruleset` and seat count, newest first;
        waiting games whose seated players were active lately (live tables)
        come before the others. Pass `next` as `cursor` for the following page
        (also in the `Link` header): pages never repeat a game, and skip only
        games created, or become live, after the first page. Unlisted games
        never appear here.
        """
        games, cursor = lobby_listing.listing(
            store(),
            config(),
            query["status"],
            query.get("cursor"),
            query["limit"],
            query.get("ruleset"),
            query.get("seats"),
        )
        app = identities.acting_app()
        if app is not None:  # apps mode: the app's games only (a page may come short)
            games = [game for game in games if app_of_game(game["id"]) == app]
        headers = {}
        if cursor is not None:
            args = {k: v for k, v in request.args.items() if k != "cursor"}
            link = url_for("lobby.Listing") + "?" + urlencode({**args, "cursor": cursor})
            headers["Link"] = f'<{link}>; rel="next"'
        return json_response({"games": games, "next": cursor}, headers=headers)


class QuickJoin(MethodView):
    @blp.doc(operationId="quickJoin", parameters=parameters("Idempotency-Key"))
    @blp.arguments(schemas.QuickJoinIn(), example={"name": "ann", "ruleset": "classic", "seats": 4})
    @blp.response(
        201, schemas.QuickJoinOut, headers=headers("ETag", "Location", "Idempotent-Replayed")
    )
    @document_errors(
        blp,
        {
            400: "Malformed JSON, or a weak Idempotency-Key",
            422: "Invalid name, seats, options or timers",
            429: "Rate limited, over the address's lobby limit, or over the app's "
            "concurrent games (apps mode: a new table)",
            503: "Storage unavailable, or no seat found in time (LOBBY_BUSY): retry",
        },
        "INVALID_JSON",
        "WEAK_IDEMPOTENCY_KEY",
        "VALIDATION_ERROR",
        "INVALID_OPTION",
        "IDEMPOTENCY_KEY_REUSED",
        "RATE_LIMITED",
        "APP_LIMIT_EXCEEDED",
        "LOBBY_BUSY",
        "STORE_UNAVAILABLE",
    )
    def post(self, body: dict[str, Any]) -> Response:
        """Quick-join a game

        Takes a seat in the oldest listed waiting game of this ruleset,
        options, seat count and timers that has one (a live table first), or
        creates such a game (listed, `created: true`) for the next players.
        In apps mode, a player's credential is seated only at a game whose
        players' mean rating is within a window of its own that widens with
        the game's wait.
        Answers like a join: the game, your seat and its bearer token (shown
        once). However many ask at once, no seat is given twice and no game
        over-filled. With a random `Idempotency-Key`, a retry is answered the
        same seat. A seat taken, and a game it lists, count against your
        address's lobby limits (429 beyond; at the limit of listed games it
        still takes a seat in a game others listed).
        """
        idem = idempotency("quick-join", secret=True)
        holder, player_id = identities.holder_for(None)
        skill, bot_fill = identities.skill_ask(player_id, body)
        try:
            out, last = matchmaking.quick_join(
                store(),
                config(),
                body,
                idem,
                address=address(),
                location=_game_url,
                app=identities.acting_app(),
                holder=holder,
                player_id=player_id,
                skill=skill,
                bot_fill_seconds=bot_fill,
            )
        except IdempotentReplay as earlier:
            assert idem is not None
            return replay(idem, earlier.fingerprint, earlier.response, earlier.last)
        if player_id is not None:
            identities.note_seated(out["id"], [player_id])
        location = url_for("games.Game", game_id=out["id"])
        tag = etag(out["version"], last)
        return json_response(out, 201, etag=tag, headers={"Location": location})


def _game_url(game_id: str) -> str:
    return url_for("games.Game", game_id=game_id)


def _own_seat(
    game_id: str, act: Callable[[GameRecord, int], list[Event]], *, gone: bool = False
) -> Response:
    """Apply ``act(record, seat)`` (its events) for the seat of the request's token
    and answer the seat as it is now; ``gone``: the act gives the seat up (it
    counts against the address's lobby cap no more)."""
    require_token()

    def operation(version: int, record: GameRecord) -> ChangeOutcome:
        seat = require_seat(record)
        member = lobby_caps.seat_member(record, seat)  # before the act voids its token
        events = act(record, seat)

        def build(new_version: int) -> tuple[int, Any]:
            out = {
                "id": record.id,
                "seat": seat,
                "name": record.seats[seat].name,
                "version": new_version,
                "status": record.status,
            }
            return 200, out

        def committed() -> None:
            lobby_listing.seats_changed(store(), config(), record)
            if gone:
                lobby_caps.let_go(store(), config(), address(), record, member)

        return ChangeOutcome(events, build, committed=committed)

    return change(game_id, operation)


class OwnSeat(MethodView):
    @blp.doc(
        operationId="renameSeat",
        parameters=parameters("Idempotency-Key"),
    )
    @blp.arguments(schemas.RenameIn(), example={"name": "ann"})
    @blp.response(200, schemas.OwnSeatOut, headers=headers("ETag", "Idempotent-Replayed"))
    @document_errors(
        blp,
        {**ERRORS_PLAYER, 409: "Game started or cancelled", 422: "Invalid name"},
        "GAME_STARTED",
        "GAME_CANCELLED",
        "VALIDATION_ERROR",
    )
    def patch(self, body: dict[str, Any], game_id: str) -> Response:
        """Rename your seat

        Changes your display name, until the game starts.
        """
        return _own_seat(
            game_id, lambda record, seat: lobby_operations.rename(record, seat, body["name"])
        )

    @blp.doc(
        operationId="leaveGame",
        parameters=parameters("Idempotency-Key"),
    )
    @blp.response(200, schemas.OwnSeatOut, headers=headers("ETag", "Idempotent-Replayed"))
    @document_errors(
        blp,
        {**ERRORS_PLAYER, 409: "Game started (resign instead) or cancelled"},
        "GAME_STARTED",
        "GAME_CANCELLED",
    )
    def delete(self, game_id: str) -> Response:
        """Leave a game before it starts

        Your seat reopens and your token is void. When the last human leaves,
        the game is cancelled (status `cancelled`) and leaves the lobby.
        """
        return _own_seat(game_id, lobby_operations.leave, gone=True)


class Resign(MethodView):
    @blp.doc(operationId="resign", parameters=parameters("Idempotency-Key"))
    @blp.response(200, views.PlayerView, headers=headers("ETag", "Idempotent-Replayed"))
    @document_errors(
        blp,
        {**ERRORS_PLAYER, 409: "Game not in progress, or resigned already", 429: "Rate limited"},
        "GAME_NOT_IN_PROGRESS",
        "RESIGNED",
    )
    def post(self, game_id: str) -> Response:
        """Resign

        A bot plays your seat to the end of the game (it cannot be taken
        back); the public view marks the seat `resigned` and the events record
        `player_resigned`. Your token still shows your seat's view.
        """
        require_token()

        def operation(version: int, record: GameRecord) -> ChangeOutcome:
            seat = require_seat(record)
            member = lobby_caps.seat_member(record, seat)
            events = lobby_operations.resign(record, seat)
            return ChangeOutcome(
                events,
                seat=seat,
                committed=lambda: lobby_caps.let_go(store(), config(), address(), record, member),
            )

        return change(game_id, operation)
