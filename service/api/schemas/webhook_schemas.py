"""A game's webhook over HTTP: what creating a game may ask for, what it answers once,
and the delivery log (``GET /v1/games/{id}/webhook``)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from service.api.schemas.fields import closed_set
from service.hosting.game_webhooks import MAX_URL_LENGTH, HookEvent

EVENT_NAMES = [event.value for event in HookEvent]


def webhook_event(**kwargs: Any) -> fields.String:
    return closed_set("WebhookEvent", EVENT_NAMES, "What a webhook delivers", **kwargs)


class WebhookIn(Schema):
    url = fields.String(
        required=True,
        validate=validate.Length(1, MAX_URL_LENGTH),
        metadata={
            "description": "Where deliveries are POSTed: an https:// URL on a public address",
            "example": "https://hooks.example.com/three-thirteen",
        },
    )
    events = fields.List(
        webhook_event(),
        validate=validate.Length(1, len(EVENT_NAMES)),
        metadata={"description": "The events to deliver (default: every one)"},
    )


class WebhookCreatedOut(Schema):
    url = fields.String(required=True)
    events = fields.List(webhook_event(), required=True)
    secret = fields.String(
        required=True,
        metadata={
            "description": "Signs every delivery (Standard Webhooks, `whsec_`...); shown only once"
        },
    )
    token = fields.String(
        required=True,
        metadata={
            "description": "Bearer token reading the delivery log "
            "(GET /v1/games/{id}/webhook); shown only once"
        },
    )


class AttemptOut(Schema):
    delivery_id = fields.String(
        required=True,
        metadata={"description": "The delivery's `webhook-id`, the same for every attempt"},
    )
    type = webhook_event(required=True)
    seq = fields.Integer(required=True, metadata={"description": "The event's seq in the game"})
    attempt = fields.Integer(required=True, metadata={"description": "1 for the first attempt"})
    at = fields.Float(required=True, metadata={"description": "When it was made (Unix seconds)"})
    outcome = closed_set(
        "DeliveryOutcome",
        ("delivered", "retrying", "failed"),
        "Delivered; failed and to be tried again; or failed for good",
        required=True,
    )
    status = fields.Integer(
        required=True, allow_none=True, metadata={"description": "The receiver's HTTP status"}
    )
    error = fields.String(
        required=True, allow_none=True, metadata={"description": "Why the attempt failed"}
    )
    duration_ms = fields.Float(required=True)
    next_attempt_at = fields.Float(
        required=True,
        allow_none=True,
        metadata={"description": "When the next attempt is due (Unix seconds), if retrying"},
    )


class WebhookLogOut(Schema):
    url = fields.String(required=True)
    events = fields.List(webhook_event(), required=True)
    attempts = fields.List(
        fields.Nested(AttemptOut),
        required=True,
        metadata={"description": "The last 200 attempts, oldest first"},
    )
