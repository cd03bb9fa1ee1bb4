"""Schemas of the players' endpoints (apps mode): minting and revoking player
tokens, barring a player, and a player's games."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas import enums
from service.api.schemas.fields import Name
from service.hosting.players import MAX_LIFETIME_SECONDS

DEFAULT_LIFETIME_SECONDS = 86400


class PlayerTokenIn(Schema):
    name = Name(required=True, metadata={"description": "The player's display name"})
    lifetime_seconds = fields.Integer(
        load_default=DEFAULT_LIFETIME_SECONDS,
        validate=validate.Range(1, MAX_LIFETIME_SECONDS),
        metadata={"description": "How long the token is valid (default: a day; 30 days at most)"},
    )


class PlayerTokenOut(Schema):
    player_id = fields.String(required=True)
    token = fields.String(
        required=True,
        metadata={
            "description": "The player's bearer token (`t13_pt_...`); shown only once. Give it "
            "to the player's device: it acts for every seat the player holds"
        },
    )
    expires_at = fields.Float(required=True, metadata={"description": "Unix time"})


class RevokedOut(Schema):
    player_id = fields.String(required=True)
    revoked = fields.Integer(required=True, metadata={"description": "Tokens revoked"})


class BarOut(Schema):
    player_id = fields.String(required=True)
    barred = fields.Boolean(required=True)
    revoked = fields.Integer(required=True, metadata={"description": "Tokens revoked"})


class MyGameOut(Schema):
    id = fields.String(required=True)
    seat = fields.Integer(required=True, metadata={"description": "The player's seat"})
    status = enums.game_status(required=True)
    version = fields.Integer(required=True)
    players = fields.List(
        fields.String(allow_none=True),
        required=True,
        metadata={"description": "Each seat's name (null: open)"},
    )


class MyGamesOut(Schema):
    games = fields.List(
        fields.Nested(MyGameOut),
        required=True,
        metadata={"description": "The latest seats taken first (50 at most)"},
    )
