"""Request bodies and query strings of the HTTP contract (the move's body aside:
:mod:`service.api.schemas.move_schemas`)."""

from __future__ import annotations

import re
from typing import Any

from marshmallow import EXCLUDE, Schema, ValidationError, fields, validate, validates_schema

from service.api.schemas import enums
from service.api.schemas.fields import (
    MAX_EVENT_SEQ,
    EventId,
    FullMatch,
    Name,
    QueryNumber,
    card_field,
    component,
    integer,
)
from service.api.schemas.webhook_schemas import WebhookIn
from service.engine.options import OPTION_SPECS, Options
from service.engine.rules import MAX_PLAYERS, MIN_PLAYERS, Game
from service.hosting.players import PLAYER_ID_PATTERN
from service.store.history import Position


def ruleset_field() -> fields.String:
    return enums.ruleset(  # checked by the engine (INVALID_OPTION)
        checked=False,
        load_default="classic",
        validate=validate.Length(1, 40),
        metadata={"description": "The preset the options start from (default: classic)"},
    )


def turn_timeout_field(**kwargs: Any) -> fields.Integer:
    """A game's per-turn time limit, as creating a game or quick-joining sends it."""
    return integer(
        validate=validate.Range(5, 86400),
        allow_none=True,
        metadata={
            "description": "Per-turn time limit (seconds); an overdue turn is played "
            "automatically. None by default, except at a listed or quick-join table, which "
            "always has one: `LOBBY_TURN_SECONDS` (60) when not given or null, at most "
            "`LOBBY_TURN_MAX_SECONDS` (600)"
        },
        **kwargs,
    )


def autopilot_after_field(**kwargs: Any) -> fields.Integer:
    """A game's number of automatic turns in a row that hands a seat to a bot."""
    return integer(
        validate=validate.Range(1, 100),
        allow_none=True,
        metadata={
            "description": "Hand a seat to a bot after this many automatic turns in a row. "
            "At a listed or quick-join table: `LOBBY_AUTOPILOT_AFTER` (2) when not given or "
            "null, and at most that"
        },
        **kwargs,
    )


def options_field(description: str) -> fields.Dict:
    """The options of a request: a plain object the engine checks (INVALID_OPTION
    names the option), documented as ``OptionsIn``."""
    return component(
        "OptionsIn",
        fields.Dict(keys=fields.String(), load_default=dict, metadata={"description": description}),
    )


CREATE_GAME_EXAMPLE = {
    "players": [{"name": "ann"}, {"name": "bob", "bot": "basic"}],
    "ruleset": "classic",
    "options": {"lay_off": True},
}


def player_id_field() -> fields.String:
    """A seat's ``player_id`` (apps mode)."""
    return fields.String(
        validate=validate.Regexp(f"^{PLAYER_ID_PATTERN}$"),
        metadata={
            "description": "Apps mode, an app's secret key only: the app's id of the user "
            "who takes this seat. Every credential of that player acts for the seat; no "
            "token is returned for it (docs/AUTH.md)"
        },
    )


class PlayerIn(Schema):
    name = Name(required=True)
    player_id = player_id_field()
    bot = enums.bot_level(  # checked by the engine (INVALID_OPTION)
        checked=False,
        allow_none=True,
        load_default=None,
        metadata={"description": "Bot level playing this seat (default: null, a human seat)"},
    )


class CreateGameIn(Schema):
    players = fields.List(
        fields.Nested(PlayerIn), required=True, validate=validate.Length(1, MAX_PLAYERS)
    )
    seats = integer(
        validate=validate.Range(2, MAX_PLAYERS),
        metadata={"description": "Total seats; defaults to the number of players"},
    )
    ruleset = ruleset_field()
    options = options_field("Option overrides over the ruleset; see GET /v1/rulesets")
    seed = fields.String(
        validate=validate.Length(1, 128),
        metadata={
            "description": "Honoured only when the server allows seeded games; a seeded "
            "game cannot be `listed` (422): its creator can compute every deal"
        },
    )
    turn_timeout_seconds = turn_timeout_field()
    autopilot_after_missed_turns = autopilot_after_field()
    listed = fields.Boolean(
        load_default=False,
        metadata={
            "description": "Show the game in the lobby (GET /v1/games) and offer its open "
            "seats to quick-join; unlisted games are reachable only by their id. Not with "
            "a seed the server honours (422)"
        },
    )
    webhook = fields.Nested(
        WebhookIn,
        metadata={"description": "Tell a backend what happens in the game (docs/WEBHOOKS.md)"},
    )


class JoinIn(Schema):
    name = Name(required=True)
    player_id = player_id_field()
    seat = integer(
        validate=validate.Range(0, MAX_PLAYERS - 1),
        metadata={"description": "The open seat to take; default the lowest one"},
    )


class AutopilotIn(Schema):
    level = enums.bot_level(
        load_default="basic",
        metadata={"description": "Bot level that plays the seat meanwhile (default: basic)"},
    )


LARGEST_HAND = Game(
    MIN_PLAYERS,
    Options.from_dict({"extra_rounds": max(OPTION_SPECS["extra_rounds"].allowed or (0,))}),
).largest_hand
"""Cards a hand holds between turns at most (the last round of the most ``extra_rounds``)."""
TABLE_MELDS = (MAX_PLAYERS - 1) * (LARGEST_HAND // 3)
"""Melds a table can hold while a hand is evaluated against it: every other
player's hand laid down, in melds of three."""
TABLE_CARDS = (MAX_PLAYERS - 1) * LARGEST_HAND
"""Cards a table can hold then: every other player's hand."""


class EvaluateIn(Schema):
    cards = fields.List(card_field(), required=True, validate=validate.Length(0, 16))
    wild_rank = fields.String(
        validate=FullMatch(
            r"^(A|a|[2-9]|10|T|t|J|j|Q|q|K|k)$", error="a rank: A, 2..10 (or T), J, Q or K"
        ),
        metadata={"description": "The wild rank: A, 2..10 (or T), J, Q or K", "example": "7"},
    )
    round = integer(
        validate=validate.Range(1, 26),
        metadata={"description": "Round number instead of wild_rank (schedule of the options)"},
    )
    options = options_field("Option overrides over the ruleset")
    ruleset = ruleset_field()
    table = fields.List(
        fields.List(card_field(), validate=validate.Length(3, TABLE_CARDS)),
        validate=validate.Length(0, TABLE_MELDS),
        metadata={
            "description": "Melds on the table that cards may be laid off onto: at most "
            f"{TABLE_MELDS} melds and {TABLE_CARDS} cards, what a game's table can hold"
        },
    )

    @validates_schema
    def _one_of_wild_or_round(self, data: dict[str, object], **_: object) -> None:
        if ("wild_rank" in data) == ("round" in data):
            raise ValidationError("give exactly one of wild_rank and round", "wild_rank")

    @validates_schema
    def _table_a_game_can_hold(self, data: dict[str, Any], **_: object) -> None:
        cards = sum(len(meld) for meld in data.get("table", []))
        if cards > TABLE_CARDS:
            raise ValidationError(
                f"{cards} cards on the table: a game's table holds at most {TABLE_CARDS}", "table"
            )


MAX_SEQ = MAX_EVENT_SEQ
START_POSITION = Position(0, None)
"""Before the first event: ``after`` when none is given."""

MAX_WAIT_SECONDS = 30
"""The longest ``wait`` of a long poll a client may ask for."""


TICKET_PATTERN = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
"""A stream ticket as the events endpoint reads it (``?ticket=``)."""


class EventsHeaders(Schema):
    class Meta:
        unknown = EXCLUDE  # every other header

    last_event_id = EventId(
        data_key="Last-Event-ID",
        metadata={
            "description": "Streams: resume after this event, named by its id `<seq>.<tag>` "
            "(what EventSource sends when it reconnects; a bare seq is taken on trust)"
        },
    )


class EventsQuery(Schema):
    after = EventId(
        load_default=START_POSITION,
        metadata={
            "default": "0",
            "description": "Only the events after this one, named by its id `<seq>.<tag>` "
            "(`last_id`); a bare seq is taken on trust (`Last-Event-ID` wins)",
        },
    )
    wait = QueryNumber(
        load_default=0.0,
        validate=validate.Range(0, MAX_WAIT_SECONDS),
        metadata={"description": "Long poll (JSON only): seconds to wait for an event"},
    )
    ticket = fields.String(
        validate=FullMatch(TICKET_PATTERN.pattern, error="not a stream ticket"),
        metadata={
            "description": "A stream ticket (POST /v1/games/{id}/stream-tickets): proves "
            "its seat, for clients that cannot send Authorization (EventSource)"
        },
    )
