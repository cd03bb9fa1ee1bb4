"""Schemas of the players' endpoints (apps mode): minting and revoking player
tokens, barring a player, a player's games and history of finished games; and of an
app's administration of its games (listing, abort, removing a player)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas import enums
from service.api.schemas.fields import FullMatch, Name, QueryInteger
from service.api.schemas.rating_schemas import RatingChangeOut
from service.hosting.archiving import HISTORY_LIMIT, HISTORY_MAX_LIMIT
from service.hosting.players import MAX_LIFETIME_SECONDS, PLAYER_ID_PATTERN

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


APP_GAMES_DEFAULT = 20
APP_GAMES_MAX = 100
ABORT_REASON_MAX = 200


class AppGamesQuery(Schema):
    status = enums.game_status(metadata={"description": "Only games of this status"})
    player_id = fields.String(
        validate=validate.Regexp(f"^{PLAYER_ID_PATTERN}$"),
        metadata={"description": "Only games where this player of the app holds a seat"},
    )
    limit = QueryInteger(
        load_default=APP_GAMES_DEFAULT,
        validate=validate.Range(1, APP_GAMES_MAX),
        metadata={"description": "Most games in the page"},
    )
    cursor = fields.String(
        validate=FullMatch(
            r"^[0-9]{15}:[A-Za-z0-9_-]{1,64}$", error="not a cursor of this listing"
        ),
        metadata={"description": "The `next` of the previous page (opaque)"},
    )


class AppGamePlayerOut(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True, allow_none=True, metadata={"description": "Null: open"})
    bot = enums.bot_level(required=True, allow_none=True)
    player_id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "The app's id of the player bound to the seat (null: none)"},
    )


class AppGameOut(Schema):
    id = fields.String(required=True)
    status = enums.game_status(required=True)
    version = fields.Integer(required=True)
    created_at = fields.Float(required=True, metadata={"description": "Unix time"})
    ruleset = fields.String(required=True)
    listed = fields.Boolean(required=True)
    players = fields.List(fields.Nested(AppGamePlayerOut), required=True)


class AppGamesOut(Schema):
    games = fields.List(
        fields.Nested(AppGameOut),
        required=True,
        metadata={"description": "The newest first; a page may come shorter than `limit`"},
    )
    next = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "The cursor of the next page (null: the last page)"},
    )


class AbortIn(Schema):
    reason = fields.String(
        load_default="aborted by the app",
        validate=validate.Length(1, ABORT_REASON_MAX),
        metadata={"description": "Why, as the players are told (`game_aborted`'s `reason`)"},
    )


class RemovedOut(Schema):
    id = fields.String(required=True)
    seat = fields.Integer(required=True, metadata={"description": "The seat freed"})
    player_id = fields.String(required=True)
    version = fields.Integer(required=True)
    status = enums.game_status(required=True)


HISTORY_CURSOR = FullMatch(r"^[0-9]{15}:[A-Za-z0-9_-]{1,64}$", error="not a cursor of this history")
"""A history's cursor: the last entry given (when it finished, and its game)."""


class HistoryQuery(Schema):
    limit = QueryInteger(
        load_default=HISTORY_LIMIT,
        validate=validate.Range(1, HISTORY_MAX_LIMIT),
        metadata={"description": "Most games in the page"},
    )
    cursor = fields.String(
        validate=HISTORY_CURSOR,
        metadata={"description": "The `next` of the previous page (opaque)"},
    )


class HistoryEntryOut(Schema):
    id = fields.String(required=True)
    finished_at = fields.Float(required=True, metadata={"description": "Unix time"})
    ruleset = enums.ruleset(required=True)
    table_size = fields.Integer(required=True, metadata={"description": "Seats at the table"})
    seat = fields.Integer(required=True, metadata={"description": "The player's seat"})
    players = fields.List(
        fields.String(allow_none=True),
        required=True,
        metadata={"description": "Each seat's name"},
    )
    totals = fields.List(
        fields.Integer(), required=True, metadata={"description": "Each seat's total score"}
    )
    winners = fields.List(
        fields.Integer(), required=True, metadata={"description": "The winning seats"}
    )
    rating = fields.Nested(
        RatingChangeOut,
        allow_none=True,
        metadata={
            "description": "The player's rating in the game's ruleset and table size, "
            "before and after the game (null or absent: the game was not rated)"
        },
    )


class HistoryOut(Schema):
    games = fields.List(
        fields.Nested(HistoryEntryOut),
        required=True,
        metadata={"description": "The player's finished games, the latest finished first"},
    )
    next = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Pass as `cursor` for the next page; null at the end"},
    )
