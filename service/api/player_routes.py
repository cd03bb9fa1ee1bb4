"""Players over HTTP (``AUTH_MODE=apps``): an app's backend mints and revokes its
players' tokens, bars players, reads a player (bar, ratings) and lists a player's
finished games; a player reads itself (its ratings) and lists its games and its finished
games.  Who may call each is
the route table's (:mod:`service.api.access`); in open mode they answer 404."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView
from marshmallow import RAISE

from service.api.auth import principal
from service.api.blueprint import Blueprint, document_errors
from service.api.context import call, store
from service.api.problems import ApiError
from service.api.responses import json_response
from service.api.schemas import player_schemas as schemas
from service.api.schemas import rating_schemas
from service.hosting import archiving, player_bars, player_games, players, ratings

blp = Blueprint(
    "players",
    __name__,
    url_prefix="/v1",
    description="Apps mode: players' tokens (an app's backend) and a player's games",
)


ERRORS_APP = {
    401: "Missing, unknown, revoked or expired credential",
    403: "Not an app's secret key, or a barred player",
    404: "Not in apps mode",
}


def _apps_mode() -> tuple[str, str | None]:
    """The app (and player) of the request's credential; 404 in open mode."""
    found = principal() if call().services.apps is not None else None
    if found is None or found.app is None:
        raise ApiError("NOT_FOUND", "players exist in apps mode only (AUTH_MODE=apps)")
    return found.app, None if found.player is None else found.player.id


class PlayerTokens(MethodView):
    @blp.doc(operationId="mintPlayerToken")
    @blp.arguments(schemas.PlayerTokenIn(), example={"name": "ann", "lifetime_seconds": 86400})
    @blp.response(201, schemas.PlayerTokenOut)
    @document_errors(
        blp,
        {**ERRORS_APP, 422: "Invalid name or lifetime"},
        "INVALID_CREDENTIAL",
        "PLAYER_BARRED",
        "VALIDATION_ERROR",
    )
    def post(self, body: dict[str, Any], player_id: str) -> Response:
        """Mint a player token

        A bearer token for the app's user `player_id` (the app's own id for them),
        shown once: the player's credential on every device, for every seat the
        player holds, until it expires or the app revokes it. Needs the app's
        secret key; refused for a barred player.
        """
        app, _player = _apps_mode()
        try:
            token, expires = players.mint(
                store().apps, app, player_id, body["name"], body["lifetime_seconds"]
            )
        except players.PlayerError as exc:
            raise ApiError("PLAYER_BARRED", str(exc)) from None
        return json_response({"player_id": player_id, "token": token, "expires_at": expires}, 201)

    @blp.doc(operationId="revokePlayerTokens")
    @blp.response(200, schemas.RevokedOut)
    @document_errors(blp, ERRORS_APP, "INVALID_CREDENTIAL", "CREDENTIAL_NOT_ALLOWED")
    def delete(self, player_id: str) -> Response:
        """Revoke a player's tokens

        Every token of the player is refused from the next request on, on every
        instance. The player's seats stay the player's: a new token acts for them.
        """
        app, _player = _apps_mode()
        revoked = players.revoke_all(store().apps, app, player_id)
        return json_response({"player_id": player_id, "revoked": revoked})


class PlayerBar(MethodView):
    @blp.doc(operationId="barPlayer")
    @blp.response(200, schemas.BarOut)
    @document_errors(blp, ERRORS_APP, "INVALID_CREDENTIAL", "CREDENTIAL_NOT_ALLOWED")
    def put(self, player_id: str) -> Response:
        """Bar a player

        Revokes the player's tokens and refuses new ones, and seats for the
        player, until the bar is lifted; takes the player off the app's
        leaderboards.
        """
        app, _player = _apps_mode()
        revoked = player_bars.bar(store(), app, player_id)
        return json_response({"player_id": player_id, "barred": True, "revoked": revoked})

    @blp.doc(operationId="unbarPlayer")
    @blp.response(200, schemas.BarOut)
    @document_errors(blp, ERRORS_APP, "INVALID_CREDENTIAL", "CREDENTIAL_NOT_ALLOWED")
    def delete(self, player_id: str) -> Response:
        """Lift a player's bar

        New tokens may be minted for the player again.
        """
        app, _player = _apps_mode()
        revoked = player_bars.unbar(store(), app, player_id)
        return json_response({"player_id": player_id, "barred": False, "revoked": revoked})


class MyGames(MethodView):
    @blp.doc(operationId="listMyGames")
    @blp.response(200, schemas.MyGamesOut)
    @document_errors(
        blp,
        {401: "Missing, unknown, revoked or expired token", 403: "Not a player's token"},
        "INVALID_CREDENTIAL",
        "CREDENTIAL_NOT_ALLOWED",
    )
    def get(self) -> Response:
        """The player's games

        The games where the player holds a seat -- waiting, playing, or finished
        until they expire -- with the seat: a second device resumes every game.
        Needs the player's token.
        """
        app, player_id = _apps_mode()
        if player_id is None:
            raise ApiError("CREDENTIAL_NOT_ALLOWED", "this needs a player's token")
        return json_response({"games": player_games.my_games(store(), app, player_id)})


HISTORY_ERRORS = {
    401: "Missing, unknown, revoked or expired credential",
    403: "Not the credential this needs",
    404: "Not in apps mode",
    422: "Invalid limit or cursor",
}


def _history(app: str, player_id: str, query: dict[str, Any]) -> Response:
    games, cursor = archiving.history(store(), app, player_id, query["limit"], query.get("cursor"))
    return json_response({"games": games, "next": cursor})


class MyHistory(MethodView):
    @blp.doc(operationId="listMyHistory")
    @blp.arguments(schemas.HistoryQuery(), location="query", unknown=RAISE)
    @blp.response(200, schemas.HistoryOut)
    @document_errors(
        blp, HISTORY_ERRORS, "INVALID_CREDENTIAL", "CREDENTIAL_NOT_ALLOWED", "VALIDATION_ERROR"
    )
    def get(self, query: dict[str, Any]) -> Response:
        """The player's finished games

        The games the player finished, the latest first, paged: each with the
        player's seat, the seats' names, the totals and winners. Kept
        `ARCHIVE_TTL_SECONDS` after the game finished, long after the game itself
        expires (its replay too). Needs the player's token.
        """
        app, player_id = _apps_mode()
        if player_id is None:
            raise ApiError("CREDENTIAL_NOT_ALLOWED", "this needs a player's token")
        return _history(app, player_id, query)


class PlayerHistory(MethodView):
    @blp.doc(operationId="listPlayerHistory")
    @blp.arguments(schemas.HistoryQuery(), location="query", unknown=RAISE)
    @blp.response(200, schemas.HistoryOut)
    @document_errors(
        blp,
        HISTORY_ERRORS,
        "INVALID_CREDENTIAL",
        "CREDENTIAL_NOT_ALLOWED",
        "VALIDATION_ERROR",
    )
    def get(self, query: dict[str, Any], player_id: str) -> Response:
        """A player's finished games

        The finished games of the app's player `player_id`, as the player sees them
        (`GET /v1/me/history`). Needs the app's secret key.
        """
        app, _player = _apps_mode()
        return _history(app, player_id, query)


RATINGS_ERRORS = {
    401: "Missing, unknown, revoked or expired credential",
    403: "Not the credential this needs",
    404: "Not in apps mode",
    422: "Invalid ruleset or table size",
}


def _ratings(app: str, player_id: str, query: dict[str, Any]) -> list[dict[str, Any]]:
    """The player's ratings as the API shows them (filtered by ``query``)."""
    listed = ratings.listed_ratings(
        store(), app, player_id, query.get("ruleset"), query.get("table_size")
    )
    return [
        {
            "ruleset": pool.ruleset,
            "table_size": pool.table_size,
            "rating": pool.rating.displayed,
            "mu": pool.rating.mu,
            "sigma": pool.rating.sigma,
            "games": pool.rating.games,
        }
        for pool in listed
    ]


class Me(MethodView):
    @blp.doc(operationId="getMe")
    @blp.arguments(rating_schemas.RatingsQuery(), location="query", unknown=RAISE)
    @blp.response(200, rating_schemas.MeOut)
    @document_errors(
        blp, RATINGS_ERRORS, "INVALID_CREDENTIAL", "CREDENTIAL_NOT_ALLOWED", "VALIDATION_ERROR"
    )
    def get(self, query: dict[str, Any]) -> Response:
        """The player

        Who the token stands for, and the player's ratings: one per ruleset and
        table size the player finished a rated game of (see docs/API.md, Ratings).
        Needs the player's token.
        """
        app, player_id = _apps_mode()
        if player_id is None:
            raise ApiError("CREDENTIAL_NOT_ALLOWED", "this needs a player's token")
        found = principal()
        name = found.player.name if found is not None and found.player is not None else ""
        return json_response(
            {
                "app_id": app,
                "player_id": player_id,
                "name": name,
                "ratings": _ratings(app, player_id, query),
            }
        )


class PlayerRead(MethodView):
    @blp.doc(operationId="getPlayer")
    @blp.arguments(rating_schemas.RatingsQuery(), location="query", unknown=RAISE)
    @blp.response(200, rating_schemas.AppPlayerOut)
    @document_errors(
        blp, RATINGS_ERRORS, "INVALID_CREDENTIAL", "CREDENTIAL_NOT_ALLOWED", "VALIDATION_ERROR"
    )
    def get(self, query: dict[str, Any], player_id: str) -> Response:
        """A player

        The app's player `player_id`: whether the app bars it, and its ratings (as
        `GET /v1/me` shows them; a player the service never saw has none). Needs
        the app's secret key.
        """
        app, _player = _apps_mode()
        barred = players.is_barred(store().apps, app, player_id)
        return json_response(
            {"player_id": player_id, "barred": barred, "ratings": _ratings(app, player_id, query)}
        )
