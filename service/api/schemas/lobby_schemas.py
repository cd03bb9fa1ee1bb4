"""The lobby's requests and answers: the listing of games, quick-join, your own
seat (rename, leave).  Every field an answer always carries is ``required``;
closed sets are enums; only what can be null is nullable."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas import enums
from service.api.schemas.fields import FullMatch, Name, QueryInteger, component, integer
from service.api.schemas.inputs import autopilot_after_field, options_field, turn_timeout_field
from service.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from service.store.lobby_index import LISTED_STATUSES

PAGE_DEFAULT = 20
PAGE_MAX = 100

_MEMBER = r"[0-9]{15}:[A-Za-z0-9_-]{1,64}"
CURSOR = FullMatch(
    rf"^(?:{_MEMBER}|L[0-9]{{15}}\.{_MEMBER}|I[0-9]{{15}}(?:\.{_MEMBER})?)$",
    error="not a cursor of this listing",
)
"""A listing's cursor: the last entry read (by creation), after the section it
was read in for the waiting games (``L``/``I`` and the time that splits the
live tables from the others: :func:`service.hosting.lobby_listing.listing`)."""


class ListingQuery(Schema):
    status = fields.String(
        load_default="waiting",
        validate=validate.OneOf(LISTED_STATUSES),
        metadata={"description": "Games of this status (one at a time)"},
    )
    ruleset = enums.ruleset(metadata={"description": "Only games of this preset"})
    seats = QueryInteger(
        validate=validate.Range(MIN_PLAYERS, MAX_PLAYERS),
        metadata={"description": "Only games of this many seats"},
    )
    limit = QueryInteger(
        load_default=PAGE_DEFAULT,
        validate=validate.Range(1, PAGE_MAX),
        metadata={"description": "Most games in the page"},
    )
    cursor = fields.String(
        validate=CURSOR,
        metadata={"description": "The `next` of the previous page (opaque)"},
    )


class LobbySeatsOut(Schema):
    total = fields.Integer(required=True)
    taken = fields.Integer(required=True)
    open = fields.List(
        fields.Integer(), required=True, metadata={"description": "Seats anyone may take now"}
    )


class LobbyPlayerOut(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    bot = enums.bot_level(required=True, allow_none=True)


class LobbyGameOut(Schema):
    id = fields.String(required=True)
    status = enums.game_status(required=True)
    ruleset = enums.ruleset(required=True)
    options = component("Options", required=True)
    seats = fields.Nested(LobbySeatsOut, required=True)
    players = fields.List(
        fields.Nested(LobbyPlayerOut), required=True, metadata={"description": "Taken seats"}
    )
    created_at = fields.Float(required=True, metadata={"description": "Unix time"})
    version = fields.Integer(required=True)


class ListingOut(Schema):
    games = fields.List(fields.Nested(LobbyGameOut), required=True)
    next = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Pass as `cursor` for the next page; null at the end"},
    )


class QuickJoinIn(Schema):
    name = Name(required=True)
    ruleset = enums.ruleset(
        load_default="classic",
        metadata={"description": "The preset the table plays (default: classic)"},
    )
    options = options_field("Option overrides over the ruleset; see GET /v1/rulesets")
    seats = integer(
        load_default=2,
        validate=validate.Range(MIN_PLAYERS, MAX_PLAYERS),
        metadata={"description": "The table's size (default: 2)"},
    )
    turn_timeout_seconds = turn_timeout_field(load_default=None)
    autopilot_after_missed_turns = autopilot_after_field(load_default=None)


class QuickJoinOut(Schema):
    id = fields.String(required=True)
    seat = fields.Integer(required=True)
    token = fields.String(
        metadata={
            "description": "Bearer token; shown only once. Absent for a player's seat (apps "
            "mode): every credential of that player acts for it"
        }
    )
    version = fields.Integer(required=True)
    status = enums.game_status(required=True)
    created = fields.Boolean(
        required=True,
        metadata={"description": "True when the game was listed anew for this request"},
    )


class RenameIn(Schema):
    name = Name(required=True)


class OwnSeatOut(Schema):
    id = fields.String(required=True)
    seat = fields.Integer(required=True)
    name = fields.String(
        required=True, allow_none=True, metadata={"description": "Null once you left"}
    )
    version = fields.Integer(required=True)
    status = enums.game_status(required=True)
