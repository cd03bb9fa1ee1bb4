"""The answers of the API's other endpoints: creating and joining games, events,
replays, rulesets, a hand's evaluation, and problems."""

from __future__ import annotations

from marshmallow import INCLUDE, Schema, fields

from service.api.schemas.views import ArrangementOut, MoveOut, RoundResultOut
from service.api.schemas.webhooks import WebhookCreatedOut


class EvaluateOut(ArrangementOut):
    wild_rank = fields.String(metadata={"description": "The wild rank used"})


class SeatOut(Schema):
    seat = fields.Integer()
    name = fields.String()
    bot = fields.String(allow_none=True)
    token = fields.String(metadata={"description": "Bearer token; shown only once"})


class CreateGameOut(Schema):
    id = fields.String()
    version = fields.Integer()
    status = fields.String()
    seeded = fields.Boolean()
    players = fields.List(fields.Nested(SeatOut))
    webhook = fields.Nested(
        WebhookCreatedOut, metadata={"description": "Only when the game was created with one"}
    )


class JoinOut(Schema):
    seat = fields.Integer()
    token = fields.String()
    version = fields.Integer()
    status = fields.String()


class StreamTicketOut(Schema):
    ticket = fields.String(
        required=True,
        metadata={"description": "Pass as `ticket` to GET /v1/games/{id}/events, once"},
    )
    expires_in = fields.Integer(
        required=True, metadata={"description": "Seconds the ticket waits for its one use"}
    )


class RematchOut(JoinOut):
    id = fields.String()


class ActionOut(Schema):
    seat = fields.Integer()
    move = fields.Nested(MoveOut)
    automatic = fields.Boolean()


class DealOut(Schema):
    round = fields.Integer()
    dealer = fields.Integer()
    discard_top = fields.String()
    hands = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))


class ReplayOut(Schema):
    id = fields.String()
    seed = fields.String()
    commitment = fields.String()
    players = fields.Integer()
    options = fields.Dict()
    deals = fields.List(fields.Nested(DealOut))
    actions = fields.List(fields.Nested(ActionOut))
    results = fields.List(fields.Nested(RoundResultOut))
    totals = fields.List(fields.Integer())
    winners = fields.List(fields.Integer())


class EventOut(Schema):
    """One event; beside ``seq`` and ``type`` its fields depend on the type
    (e.g. ``seat``, ``card``, ``melds``); ``private`` marks events for your seat."""

    class Meta:
        unknown = INCLUDE

    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    seat = fields.Integer()
    private = fields.Boolean()


class EventsOut(Schema):
    events = fields.List(fields.Nested(EventOut))
    last_seq = fields.Integer()


class OptionOut(Schema):
    name = fields.String()
    default = fields.Raw(allow_none=True)
    description = fields.String()
    allowed = fields.List(fields.Raw(allow_none=True))
    nullable = fields.Boolean()
    minimum = fields.Integer()
    maximum = fields.Integer()


class RulesetOut(Schema):
    name = fields.String()
    description = fields.String()
    options = fields.Dict()


class RulesetsOut(Schema):
    rulesets = fields.List(fields.Nested(RulesetOut))
    options = fields.List(fields.Nested(OptionOut))
    bots = fields.List(fields.String())


class Problem(Schema):
    """RFC 9457 problem details; some problems add fields (``current_version``)."""

    class Meta:
        unknown = INCLUDE

    type = fields.String()
    title = fields.String()
    status = fields.Integer()
    detail = fields.String()
    code = fields.String()
    errors = fields.Dict()
