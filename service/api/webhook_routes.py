"""A game's webhook over HTTP: its delivery log, for the holder of the webhook's token.

The webhook itself is asked for when the game is created (``webhook`` in
``POST /v1/games``, :mod:`service.api.game_routes`), which answers its signing secret
and this token once."""

from __future__ import annotations

import hmac

from flask import Response
from flask.views import MethodView

from service.api.auth import require_token, unauthorized
from service.api.blueprint import ERRORS_PLAYER, Blueprint, document_errors
from service.api.changes import current
from service.api.context import store
from service.api.problems import ApiError
from service.api.responses import json_response
from service.api.schemas.webhook_schemas import WebhookLogOut
from service.hosting.tokens import hash_token
from service.store.outbox import read_log

blp = Blueprint(
    "webhooks", __name__, url_prefix="/v1/games", description="A game's webhook deliveries"
)


class WebhookLog(MethodView):
    @blp.doc(operationId="getWebhookLog")
    @blp.response(200, WebhookLogOut)
    @document_errors(
        blp,
        {**ERRORS_PLAYER, 404: "Unknown game, or no webhook"},
        "UNAUTHORIZED",
        "GAME_NOT_FOUND",
        "WEBHOOK_NOT_FOUND",
    )
    def get(self, game_id: str) -> Response:
        """The webhook's delivery log

        The game's webhook (URL and events) and its last 200 delivery attempts, oldest
        first: each with the delivery's id, event and seq, the attempt's number, time,
        outcome (`delivered`, `retrying`, `failed`), the receiver's status or the error.
        Needs the webhook's token (`webhook.token`, answered once when the game was
        created); a seat's token is not enough.
        """
        token = require_token()
        _version, record, _last = current(game_id)
        hook = record.webhook
        if hook is None:
            raise ApiError("WEBHOOK_NOT_FOUND", "this game was created without a webhook")
        if not hmac.compare_digest(hook.token_hash, hash_token(token)):
            raise unauthorized("this token is not the webhook token of this game")
        out = {
            "url": hook.url,
            "events": list(hook.events),
            "attempts": read_log(store().client, game_id),
        }
        return json_response(out)
