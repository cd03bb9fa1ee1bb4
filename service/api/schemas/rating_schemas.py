"""Schemas of players' ratings (apps mode): ``GET /v1/me``, ``GET
/v1/players/{player_id}`` (the app's read of its player), and the change of a
rating in a player's history."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from service.api.schemas import enums
from service.api.schemas.fields import QueryInteger
from service.engine import MAX_PLAYERS, MIN_PLAYERS


class RatingsQuery(Schema):
    ruleset = enums.ruleset(metadata={"description": "Only the ratings of this ruleset"})
    table_size = QueryInteger(
        validate=validate.Range(MIN_PLAYERS, MAX_PLAYERS),
        metadata={
            "description": "Only the ratings of tables of this size. With `ruleset` too: "
            "that rating, the default one (no games) if the player has none yet"
        },
    )


class RatingOut(Schema):
    ruleset = enums.ruleset(required=True)
    table_size = fields.Integer(required=True, metadata={"description": "Seats at the table"})
    rating = fields.Float(
        required=True,
        metadata={
            "description": "The displayed rating, `mu - 3 sigma` (0 for a new player): "
            "rises with wins and as the estimate gets surer"
        },
    )
    mu = fields.Float(required=True, metadata={"description": "The estimate of the skill"})
    sigma = fields.Float(required=True, metadata={"description": "Its uncertainty"})
    games = fields.Integer(required=True, metadata={"description": "Rated games played"})


def ratings_field() -> fields.List[dict[str, Any]]:
    return fields.List(
        fields.Nested(RatingOut),
        required=True,
        metadata={
            "description": "A rating per ruleset and table size the player finished a rated "
            "game of, by ruleset then size (see docs/API.md, Ratings)"
        },
    )


class MeOut(Schema):
    app_id = fields.String(required=True, metadata={"description": "The player's app"})
    player_id = fields.String(required=True, metadata={"description": "The app's id for you"})
    name = fields.String(required=True, metadata={"description": "Your token's display name"})
    ratings = ratings_field()


class AppPlayerOut(Schema):
    player_id = fields.String(required=True)
    barred = fields.Boolean(required=True, metadata={"description": "Barred by the app"})
    ratings = ratings_field()


class RatingChangeOut(Schema):
    before = fields.Float(required=True, metadata={"description": "The displayed rating before"})
    after = fields.Float(
        required=True,
        metadata={
            "description": "After, as computed when the game was archived (another game "
            "archived meanwhile may move the rating too)"
        },
    )
