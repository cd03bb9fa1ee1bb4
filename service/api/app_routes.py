"""An app's administration of its games over HTTP (``AUTH_MODE=apps``, its secret
key): list them, abort one, remove a player from one before it starts.  Reading
one with its seats' players is the game's own view (:func:`handlers.public_view`
answers the app's key with each seat's ``player_id``).  Who may call each is the
route table's (:mod:`service.api.access`); in open mode they answer 404."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView
from marshmallow import RAISE

from service.api import identities, metrics
from service.api.blueprint import Blueprint, document_errors
from service.api.changes import ChangeOutcome, change
from service.api.context import config, store
from service.api.problems import ApiError
from service.api.responses import json_response
from service.api.schemas import player_schemas as schemas
from service.api.schemas import views
from service.api.schemas.headers import headers, parameters
from service.hosting import app_listing, game_admin, lobby_listing
from service.hosting.record import GameRecord

blp = Blueprint(
    "app",
    __name__,
    url_prefix="/v1",
    description="Apps mode: an app's administration of its games (its secret key)",
)

ERRORS_APP = {
    401: "Missing, unknown or revoked key",
    403: "Not an app's secret key",
    404: "Not in apps mode, or a game of another app",
    503: "Storage unavailable",
}


def _app() -> str:
    """The app of the request's key (the route table lets only an app's key in);
    404 in open mode."""
    app = identities.acting_app()
    if app is None:
        raise ApiError("NOT_FOUND", "an app's administration exists in apps mode only")
    return app


class AppGames(MethodView):
    @blp.doc(operationId="listAppGames")
    @blp.arguments(schemas.AppGamesQuery(), location="query", unknown=RAISE)
    @blp.response(200, schemas.AppGamesOut)
    @document_errors(
        blp,
        {**ERRORS_APP, 422: "Invalid filter or cursor"},
        "INVALID_CREDENTIAL",
        "CREDENTIAL_NOT_ALLOWED",
        "VALIDATION_ERROR",
    )
    def get(self, query: dict[str, Any]) -> Response:
        """List the app's games

        Every game the app made (the latest 100,000), newest first, each as it is
        now with the player bound to each seat; of one `status`, and with a seat
        of `player_id`, when given. Pass `next` as `cursor` for the following
        page: a page with filters may come shorter than `limit` (even empty)
        while `next` is not null. A game gone (expired) is not listed.
        """
        games, cursor = app_listing.page(
            store(),
            _app(),
            status=query.get("status"),
            player_id=query.get("player_id"),
            cursor=query.get("cursor"),
            limit=query["limit"],
        )
        return json_response({"games": games, "next": cursor})


class AbortGame(MethodView):
    @blp.doc(operationId="abortGame", parameters=parameters("Idempotency-Key"))
    @blp.arguments(schemas.AbortIn(), example={"reason": "a player reported cheating"})
    @blp.response(200, views.GameView, headers=headers("ETag", "Idempotent-Replayed"))
    @document_errors(
        blp,
        {**ERRORS_APP, 409: "The game is over (finished, cancelled or aborted)"},
        "INVALID_CREDENTIAL",
        "CREDENTIAL_NOT_ALLOWED",
        "GAME_ABORTED",
        "GAME_CANCELLED",
        "GAME_NOT_IN_PROGRESS",
        "VALIDATION_ERROR",
    )
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Abort a game

        Ends a waiting or playing game of the app for good: its status is
        `aborted`, its last event `game_aborted` with the `reason` (every follower
        of its events gets it), no bot or turn timer plays it any more, and every
        move or seat is refused (409 `GAME_ABORTED`). A second abort is refused
        409 `GAME_ABORTED`; with the same `Idempotency-Key` it is answered as the
        first. Answers the game's view as the app sees it.
        """
        app = _app()  # the route table checked that the game is the app's

        def operation(version: int, record: GameRecord) -> ChangeOutcome:
            events = game_admin.abort(record, body["reason"])
            return ChangeOutcome(
                events,
                lambda new: (200, app_listing.app_view(record, new)),
                committed=lambda: metrics.GAMES_ABORTED.labels(app).inc(),
            )

        return change(game_id, operation)


class RemovePlayer(MethodView):
    @blp.doc(operationId="removePlayer", parameters=parameters("Idempotency-Key"))
    @blp.response(200, schemas.RemovedOut, headers=headers("ETag", "Idempotent-Replayed"))
    @document_errors(
        blp,
        {
            **ERRORS_APP,
            404: "Not in apps mode, a game of another app, or the player holds no seat of it",
            409: "The game started, or will never start",
        },
        "INVALID_CREDENTIAL",
        "CREDENTIAL_NOT_ALLOWED",
        "PLAYER_NOT_SEATED",
        "GAME_STARTED",
        "GAME_CANCELLED",
        "GAME_ABORTED",
    )
    def delete(self, game_id: str, player_id: str) -> Response:
        """Remove a player from a waiting game

        Frees the seat the app's player holds, as if the player left (event
        `player_left`, `reason` `removed`); the last human out cancels the game.
        Refused once the game started (409 `GAME_STARTED`): abort it instead.
        """
        app = _app()

        def operation(version: int, record: GameRecord) -> ChangeOutcome:
            seat, events = game_admin.remove_player(record, app, player_id)

            def build(new_version: int) -> tuple[int, Any]:
                out = {
                    "id": record.id,
                    "seat": seat,
                    "player_id": player_id,
                    "version": new_version,
                    "status": record.status,
                }
                return 200, out

            def committed() -> None:
                lobby_listing.seats_changed(store(), config(), record)

            return ChangeOutcome(events, build, committed=committed)

        return change(game_id, operation)
