"""An app's webhook over HTTP: its delivery log and a delivery sent again
(``/v1/app/webhook/...``, :mod:`service.api.app_webhook_routes`)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields

from service.api.schemas.fields import closed_set
from service.api.schemas.webhook_schemas import AttemptOut
from service.hosting.app_webhooks import EVENT_NAMES


def app_webhook_event(**kwargs: Any) -> fields.String:
    return closed_set("AppWebhookEvent", EVENT_NAMES, "What an app's webhook delivers", **kwargs)


class AppWebhookOut(Schema):
    url = fields.String(required=True)
    events = fields.List(app_webhook_event(), required=True)
    turn_only = closed_set(
        "TurnOnly",
        ("always", "offline"),
        "Whether a turn is told always, or only when its player has no stream of the game open",
        required=True,
    )


class AppAttemptOut(AttemptOut):
    type = app_webhook_event(required=True)
    game_id = fields.String(required=True, metadata={"description": "The game it is about"})


class AppDeliveriesOut(Schema):
    webhook = fields.Nested(
        AppWebhookOut,
        required=True,
        allow_none=True,
        metadata={"description": "Where deliveries go now (null: nowhere); never the secret"},
    )
    attempts = fields.List(
        fields.Nested(AppAttemptOut),
        required=True,
        metadata={"description": "The last 200 attempts, oldest first"},
    )


class RedeliveredOut(Schema):
    delivery_id = fields.String(required=True)
    game_id = fields.String(required=True)
