"""The answers of the API's other endpoints: creating and joining games, events,
replays, rulesets, a hand's evaluation, and problems."""

from __future__ import annotations

from marshmallow import Schema, fields

from service.api.schemas.enums import bot_level, game_status, problem_code
from service.api.schemas.fields import card_field, component
from service.api.schemas.option_schemas import OptionValue
from service.api.schemas.views import ArrangementOut, LayOffOut, RoundResultOut
from service.api.schemas.webhook_schemas import WebhookCreatedOut


class EvaluateOut(ArrangementOut):
    layoffs = fields.List(fields.Nested(LayOffOut), required=True)
    wild_rank = fields.String(required=True, metadata={"description": "The wild rank used"})


class SeatOut(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    bot = bot_level(required=True, allow_none=True)
    token = fields.String(
        metadata={
            "description": "Bearer token of a human seat not bound to a player; shown only once"
        }
    )
    player_id = fields.String(
        metadata={"description": "Apps mode: the player holding the seat (then no token)"}
    )


class CreateGameOut(Schema):
    id = fields.String(required=True)
    version = fields.Integer(required=True)
    status = game_status(required=True)
    seeded = fields.Boolean(required=True)
    players = fields.List(
        fields.Nested(SeatOut), required=True, metadata={"description": "The seats taken"}
    )
    webhook = fields.Nested(
        WebhookCreatedOut, metadata={"description": "Only when the game was created with one"}
    )


class JoinOut(Schema):
    seat = fields.Integer(required=True)
    token = fields.String(
        metadata={
            "description": "Bearer token; shown only once. Absent for a seat taken by a player "
            "(apps mode: `player_id`): every credential of that player acts for it"
        }
    )
    player_id = fields.String(metadata={"description": "Apps mode: the player taking the seat"})
    version = fields.Integer(required=True)
    status = game_status(required=True)


class StreamTicketOut(Schema):
    ticket = fields.String(
        required=True,
        metadata={"description": "Pass as `ticket` to GET /v1/games/{id}/events"},
    )
    expires_in = fields.Integer(
        required=True,
        metadata={
            "description": "Seconds the ticket stays valid unused; a stream it opened "
            "renews it while open"
        },
    )


class RematchOut(JoinOut):
    id = fields.String(required=True, metadata={"description": "The rematch's id"})


class ActionOut(Schema):
    seat = fields.Integer(required=True)
    move = component("Move", required=True)
    automatic = fields.Boolean(metadata={"description": "Present (true): made by the turn timer"})


class DealOut(Schema):
    round = fields.Integer(required=True)
    dealer = fields.Integer(required=True)
    discard_top = card_field(required=True)
    hands = fields.Dict(
        keys=fields.String(),
        values=fields.List(card_field()),
        required=True,
        metadata={"description": "Every seat's hand as dealt, by seat number"},
    )


class ReplayOut(Schema):
    id = fields.String(required=True)
    seed = fields.String(required=True)
    commitment = fields.String(required=True)
    players = fields.Integer(required=True)
    options = component("Options", required=True)
    deals = fields.List(fields.Nested(DealOut), required=True)
    actions = fields.List(fields.Nested(ActionOut), required=True)
    results = fields.List(fields.Nested(RoundResultOut), required=True)
    totals = fields.List(fields.Integer(), required=True)
    winners = fields.List(fields.Integer(), required=True)


class ResetOut(Schema):
    shared_seq = fields.Integer(
        required=True, metadata={"description": "The last seq both histories surely share"}
    )
    shared_id = fields.String(
        required=True,
        metadata={"description": "Its event's id (`0`: none, re-read everything)"},
    )


class EventsOut(Schema):
    events = fields.List(component("Event"), required=True)
    last_seq = fields.Integer(required=True, metadata={"description": "The cursor's seq"})
    last_id = fields.String(
        required=True,
        metadata={
            "description": "The cursor: pass it as `after` next time (the id of the last "
            "event examined, `0` before the first)"
        },
    )
    reset = fields.Nested(
        ResetOut,
        metadata={
            "description": "Present when `after` names an event of a history the game no "
            "longer has (Redis came back with less than it acknowledged): forget what "
            "you saw after `shared_seq`, re-read the view; `events` follow `shared_seq`"
        },
    )


class OptionOut(Schema):
    name = fields.String(required=True)
    default = fields.Raw(required=True, allow_none=True, metadata=OptionValue)
    description = fields.String(required=True)
    allowed = fields.List(
        fields.Raw(allow_none=True, metadata=OptionValue),
        metadata={"description": "The values allowed, for an option of a few values"},
    )
    nullable = fields.Boolean(metadata={"description": "For a number option: null allowed"})
    minimum = fields.Integer(metadata={"description": "For a number option"})
    maximum = fields.Integer(metadata={"description": "For a number option"})


class RulesetOut(Schema):
    name = fields.String(required=True)
    description = fields.String(required=True)
    options = component("Options", required=True)


class RulesetsOut(Schema):
    rulesets = fields.List(fields.Nested(RulesetOut), required=True)
    options = fields.List(fields.Nested(OptionOut), required=True)
    bots = fields.List(bot_level(), required=True)


class Problem(Schema):
    """RFC 9457 problem details with the stable ``code`` (docs/ERRORS.md)."""

    type = fields.String(required=True, metadata={"description": "A URI naming the code"})
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    code = problem_code(required=True)
    errors = fields.Raw(
        metadata={
            "description": "VALIDATION_ERROR and engine errors: the messages by field "
            "(nested by position for list items)",
            "type": "object",
            "additionalProperties": {},
        }
    )
    current_version = fields.Integer(
        metadata={
            "description": "PRECONDITION_FAILED, HISTORY_DIVERGED: the game's current version"
        }
    )
    shared_seq = fields.Integer(
        metadata={"description": "HISTORY_DIVERGED: the last seq both histories share"}
    )
    shared_id = fields.String(
        metadata={"description": "HISTORY_DIVERGED: its event's id (`0`: none known)"}
    )
