"""Leaderboards over HTTP (``AUTH_MODE=apps``): a board's pages, for the app's backend
and its players; a player's place with its neighbours, for the player (``around-me``)
or the app's backend (``players/{player_id}``).  Who may call each is the route
table's (:mod:`service.api.access`).  In open mode there are no players, so no
ratings and no boards: every route answers 404."""

from __future__ import annotations

import re
from typing import Any

from flask import Response
from flask.views import MethodView
from marshmallow import RAISE

from service.api.auth import principal
from service.api.blueprint import Blueprint, document_errors
from service.api.context import call, config, store
from service.api.problems import ApiError
from service.api.responses import json_response
from service.api.schemas import leaderboard_schemas as schemas
from service.hosting import leaderboards
from service.hosting.leaderboards import Board, BoardError

blp = Blueprint(
    "leaderboards",
    __name__,
    url_prefix="/v1",
    description="Apps mode: an app's players ranked by rating, per ruleset and table size",
)

SIZE = re.compile(r"[0-9]{1,3}")
"""A table size in a path (its value is checked by the board)."""

ERRORS = {
    401: "Missing, unknown, revoked or expired credential",
    403: "Not the credential this needs",
    404: "Not in apps mode, or no board of this ruleset and table size",
    422: "Invalid limit, count or cursor",
}


def _board(ruleset: str, table_size: str) -> tuple[Board, str | None]:
    """The request's app's board of ``ruleset`` and ``table_size`` (the path's
    segments), and the player of its credential (None: the app's key); 404 in open
    mode or for no such board."""
    found = principal() if call().services.apps is not None else None
    if found is None or found.app is None:
        raise ApiError("NOT_FOUND", "leaderboards exist in apps mode only (AUTH_MODE=apps)")
    if SIZE.fullmatch(table_size) is None:
        raise ApiError(
            "NOT_FOUND", f"no leaderboard of {table_size!r} seats: a table size is a number"
        )
    try:
        board = Board(found.app, ruleset, int(table_size))
    except BoardError as exc:
        raise ApiError("NOT_FOUND", str(exc)) from None
    return board, None if found.player is None else found.player.id


def _head(board: Board, total: int) -> dict[str, Any]:
    return {
        "ruleset": board.ruleset,
        "table_size": board.table_size,
        "min_games": leaderboards.min_games(config()),
        "total": total,
    }


def _standing(board: Board, player_id: str, count: int) -> Response:
    found = leaderboards.around(store(), board, player_id, count)
    return json_response(
        {
            **_head(board, found.total),
            "player_id": player_id,
            "rank": found.rank,
            "entries": [entry.to_dict() for entry in found.entries],
        }
    )


class Leaderboard(MethodView):
    @blp.doc(operationId="getLeaderboard")
    @blp.arguments(schemas.TopQuery(), location="query", unknown=RAISE)
    @blp.response(200, schemas.TopOut)
    @document_errors(
        blp, ERRORS, "INVALID_CREDENTIAL", "CREDENTIAL_NOT_ALLOWED", "VALIDATION_ERROR"
    )
    def get(self, query: dict[str, Any], ruleset: str, table_size: str) -> Response:
        """A page of a leaderboard

        The app's players of `ruleset` and `table_size` by rating, highest first,
        ties by player id; a player is on the board once it has played `min_games`
        rated games of them. Pass `next` as `cursor` for the following page: a
        rating that changes between two pages never makes a page repeat an entry
        given before (a player that moved ahead of the cursor is not met again).
        Needs the app's secret key or one of its players' tokens.
        """
        board, _player = _board(ruleset, table_size)
        try:
            page = leaderboards.top(store(), board, query["limit"], query.get("cursor"))
        except BoardError as exc:
            raise ApiError("VALIDATION_ERROR", str(exc), errors={"cursor": [str(exc)]}) from None
        return json_response(
            {
                **_head(board, page.total),
                "entries": [entry.to_dict() for entry in page.entries],
                "next": page.next,
            }
        )


class AroundMe(MethodView):
    @blp.doc(operationId="getMyLeaderboardPlace")
    @blp.arguments(schemas.AroundQuery(), location="query", unknown=RAISE)
    @blp.response(200, schemas.AroundOut)
    @document_errors(
        blp, ERRORS, "INVALID_CREDENTIAL", "CREDENTIAL_NOT_ALLOWED", "VALIDATION_ERROR"
    )
    def get(self, query: dict[str, Any], ruleset: str, table_size: str) -> Response:
        """The player's place on a leaderboard

        The player's rank with the `count` entries above and below it (`rank` null and
        no entries while it has played fewer than `min_games` rated games). Needs the
        player's token.
        """
        board, player_id = _board(ruleset, table_size)
        if player_id is None:
            raise ApiError("CREDENTIAL_NOT_ALLOWED", "this needs a player's token")
        return _standing(board, player_id, query["count"])


class PlayerPlace(MethodView):
    @blp.doc(operationId="getPlayerLeaderboardPlace")
    @blp.arguments(schemas.AroundQuery(), location="query", unknown=RAISE)
    @blp.response(200, schemas.AroundOut)
    @document_errors(
        blp, ERRORS, "INVALID_CREDENTIAL", "CREDENTIAL_NOT_ALLOWED", "VALIDATION_ERROR"
    )
    def get(self, query: dict[str, Any], ruleset: str, table_size: str, player_id: str) -> Response:
        """A player's place on a leaderboard

        The place of the app's player `player_id`, as the player sees it
        (`.../around-me`). Needs the app's secret key.
        """
        board, _player = _board(ruleset, table_size)
        return _standing(board, player_id, query["count"])
