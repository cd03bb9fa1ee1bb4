"""Schemas of the leaderboards' endpoints (apps mode): a page of a board, and a
player's place on it with its neighbours."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas import enums
from service.api.schemas.fields import FullMatch, QueryInteger
from service.hosting.leaderboards import (
    AROUND_COUNT,
    AROUND_MAX_COUNT,
    CURSOR_PATTERN,
    TOP_LIMIT,
    TOP_MAX_LIMIT,
)


class TopQuery(Schema):
    limit = QueryInteger(
        load_default=TOP_LIMIT,
        validate=validate.Range(1, TOP_MAX_LIMIT),
        metadata={"description": "Most entries in the page"},
    )
    cursor = fields.String(
        validate=[
            validate.Length(max=200),
            FullMatch(CURSOR_PATTERN, error="not a cursor of a leaderboard"),
        ],
        metadata={"description": "The `next` of the previous page (opaque)"},
    )


class AroundQuery(Schema):
    count = QueryInteger(
        load_default=AROUND_COUNT,
        validate=validate.Range(0, AROUND_MAX_COUNT),
        metadata={"description": "Entries above the player, and as many below"},
    )


class EntryOut(Schema):
    rank = fields.Integer(
        required=True, metadata={"description": "1: the highest rating; ties by player id"}
    )
    player_id = fields.String(required=True, metadata={"description": "The app's id of the player"})
    rating = fields.Float(
        required=True, metadata={"description": "The displayed rating (`mu - 3 sigma`)"}
    )
    games = fields.Integer(
        required=True, metadata={"description": "Rated games of this ruleset and table size"}
    )


class BoardOut(Schema):
    ruleset = enums.ruleset(required=True)
    table_size = fields.Integer(required=True, metadata={"description": "Seats at the table"})
    min_games = fields.Integer(
        required=True,
        metadata={"description": "Rated games a player needs to be on the board"},
    )
    total = fields.Integer(required=True, metadata={"description": "Players on the board"})


class TopOut(BoardOut):
    entries = fields.List(
        fields.Nested(EntryOut),
        required=True,
        metadata={"description": "The board's entries after the cursor, highest first"},
    )
    next = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Pass as `cursor` for the next page; null at the end"},
    )


class AroundOut(BoardOut):
    player_id = fields.String(required=True)
    rank = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "The player's rank; null: not on the board (too few games)"},
    )
    entries = fields.List(
        fields.Nested(EntryOut),
        required=True,
        metadata={
            "description": "Up to `count` entries above the player, the player's, and up to "
            "`count` below, highest first (empty when the player is not on the board)"
        },
    )
