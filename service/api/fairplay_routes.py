"""Fair and lively play over HTTP: autopilot seats, rematches, replays."""

from __future__ import annotations

from typing import Any

import orjson
from flask import Response, url_for
from flask.views import MethodView

from service.api import identities
from service.api.auth import principal, require_holder, require_seat, require_token
from service.api.blueprint import ERRORS_PLAYER, ERRORS_READ, Blueprint, document_errors
from service.api.changes import ChangeOutcome, change, current
from service.api.context import config, store
from service.api.responses import json_response
from service.api.schemas import inputs, outputs, views
from service.api.schemas.headers import headers, parameters
from service.hosting import archiving, fair_play
from service.hosting.record import GameRecord
from service.hosting.seating import claim_reserved
from service.hosting.timers import set_autopilot
from service.store import GameNotFound

blp = Blueprint(
    "fairplay", __name__, url_prefix="/v1/games", description="Autopilot, rematches, replays"
)


def _seat_change(game_id: str, level: str | None) -> Response:
    require_token()

    def operation(version: int, record: GameRecord) -> ChangeOutcome:
        seat = require_seat(record)
        events = set_autopilot(record, seat, level)
        return ChangeOutcome(events, seat=seat)

    return change(game_id, operation)


class Autopilot(MethodView):
    @blp.doc(
        operationId="startAutopilot",
        parameters=parameters("Idempotency-Key"),
    )
    @blp.arguments(inputs.AutopilotIn(), example={"level": "basic"})
    @blp.response(200, views.PlayerView, headers=headers("ETag", "Idempotent-Replayed"))
    @document_errors(blp, {**ERRORS_PLAYER, 422: "Unknown bot level", 429: "Rate limited"})
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Hand your seat to a bot

        The bot plays your turns (at once, if it is your turn) until you take
        the seat back. Your token stays valid. Asked again at the level it
        plays, nothing changes: no event, the same version, your view as it is.
        """
        return _seat_change(game_id, body["level"])

    @blp.doc(
        operationId="stopAutopilot",
        parameters=parameters("Idempotency-Key"),
    )
    @blp.response(200, views.PlayerView, headers=headers("ETag", "Idempotent-Replayed"))
    @document_errors(blp, {**ERRORS_PLAYER, 429: "Rate limited"})
    def delete(self, game_id: str) -> Response:
        """Take your seat back from the bot

        When no bot plays your seat, nothing changes: no event, the same
        version, your view as it is.
        """
        return _seat_change(game_id, None)


class Rematch(MethodView):
    @blp.doc(operationId="rematch", parameters=parameters("Idempotency-Key"))
    @blp.response(
        201, outputs.RematchOut, headers=headers("ETag", "Location", "Idempotent-Replayed")
    )
    @document_errors(
        blp,
        {
            **ERRORS_PLAYER,
            403: "No seat of the rematch reserved for this token",
            409: "Game not finished, or seat claimed",
            429: "Over the app's concurrent games (apps mode)",
        },
        "SEAT_NOT_RESERVED",
        "GAME_NOT_FINISHED",
        "SEAT_ALREADY_CLAIMED",
        "APP_LIMIT_EXCEEDED",
    )
    def post(self, game_id: str) -> Response:
        """Rematch

        A new game with the same seats, options and bots, linked from this one.
        Each human player calls this with their token to take their seat in the
        new game (and a new token); it deals once every seat is claimed.
        """
        holder = require_holder()
        new_id = _rematch_id(game_id)

        def claim(version: int, record: GameRecord) -> ChangeOutcome:
            seat, new_token, events = claim_reserved(record, holder)

            def build(new_version: int) -> tuple[int, Any]:
                body: dict[str, Any] = {"id": record.id, "seat": seat}
                if new_token is not None:
                    body["token"] = new_token
                body |= {"version": new_version, "status": record.status}
                return 201, body

            location = url_for("games.Game", game_id=record.id)
            return ChangeOutcome(events, build, {"Location": location})

        answer = change(new_id, claim)
        found = principal()
        if found is not None and found.player is not None and answer.status_code == 201:
            identities.note_seated(new_id, [found.player.id])
        return answer


def _rematch_id(game_id: str) -> str:
    """The rematch of a finished game, made by the first player to ask
    (:func:`service.hosting.fair_play.rematch`)."""
    _version, old, _last = current(game_id)
    require_seat(old)
    return fair_play.rematch(store(), config(), old)


class Replay(MethodView):
    @blp.doc(operationId="getReplay")
    @blp.response(200, outputs.ReplayOut)
    @document_errors(
        blp, {**ERRORS_READ, 409: "Game not finished", 429: "Rate limited"}, "GAME_NOT_FINISHED"
    )
    def get(self, game_id: str) -> Response:
        """Replay of a finished game

        The revealed seed, every deal and every action: re-simulate it with
        `three-thirteen-verify` to check the deals were fixed at creation. Once the
        game itself expires, its replay is served from its archive, kept
        `ARCHIVE_TTL_SECONDS` after it finished (in apps mode, to its app and the
        app's players: a seat's token is the expired game's).
        """
        try:
            _version, record, _last = current(game_id)
        except GameNotFound:
            archived = archiving.archived_replay(store(), game_id)
            if archived is None:
                raise
            return json_response(orjson.Fragment(archived))
        return json_response(orjson.Fragment(fair_play.replay_text(store(), record)))
