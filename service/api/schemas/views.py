"""The game's views as the API answers them (``GET /v1/games/{id}``, a seat's view,
a move's answer): dumped straight with orjson from dicts built by the engine's
view function; these schemas describe them (and a test checks live responses
against the generated spec)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.api.schemas.fields import card_field


class MeldOut(Schema):
    kind = fields.String(validate=validate.OneOf(["set", "run"]))
    cards = fields.List(card_field())


class LayOffOut(Schema):
    target = fields.Integer(metadata={"description": "Index of the table meld extended"})
    cards = fields.List(card_field())


class ArrangementOut(Schema):
    melds = fields.List(fields.Nested(MeldOut))
    deadwood = fields.List(card_field())
    points = fields.Integer()
    layoffs = fields.List(fields.Nested(LayOffOut))


class HandResultOut(ArrangementOut):
    seat = fields.Integer()
    penalty = fields.Integer()


class RoundResultOut(Schema):
    number = fields.Integer()
    wild_rank = fields.String()
    went_out = fields.Integer(allow_none=True)
    ended_by = fields.String(validate=validate.OneOf(["went_out", "turn_limit"]))
    multiplier = fields.Integer()
    hands = fields.List(fields.Nested(HandResultOut))
    table = fields.List(fields.Nested(MeldOut))


class TableMeldOut(MeldOut):
    seat = fields.Integer()


class RoundOut(Schema):
    number = fields.Integer()
    hand_size = fields.Integer()
    wild_rank = fields.String()
    dealer = fields.Integer()
    turn = fields.Integer()
    phase = fields.String(validate=validate.OneOf(["draw", "discard"]))
    stock_size = fields.Integer()
    discard_top = fields.String(allow_none=True)
    discard_size = fields.Integer()
    went_out = fields.Integer(allow_none=True)
    final_turns_left = fields.Integer(allow_none=True)
    turns_taken = fields.Integer()
    table = fields.List(fields.Nested(TableMeldOut))


class PlayerOut(Schema):
    seat = fields.Integer()
    name = fields.String(allow_none=True)
    bot = fields.String(allow_none=True)
    autopilot = fields.Boolean(metadata={"description": "A human seat played by a bot for now"})
    resigned = fields.Boolean(
        metadata={"description": "Its player resigned: a bot plays it to the end"}
    )
    hand_size = fields.Integer()
    total = fields.Integer()


class FairnessOut(Schema):
    commitment = fields.String(metadata={"description": "SHA-256 of the game's secret seed"})
    seed = fields.String(allow_none=True, metadata={"description": "Revealed once finished"})
    seeded = fields.Boolean()


class TimerOut(Schema):
    turn_timeout_seconds = fields.Integer(allow_none=True)
    autopilot_after_missed_turns = fields.Integer(allow_none=True)
    deadline = fields.Float(
        allow_none=True, metadata={"description": "Unix time when the current turn times out"}
    )


class RematchLinkOut(Schema):
    of = fields.String(allow_none=True, metadata={"description": "The game this one rematches"})
    game = fields.String(allow_none=True, metadata={"description": "This game's rematch"})


class GameView(Schema):
    id = fields.String()
    version = fields.Integer()
    status = fields.String(validate=validate.OneOf(["waiting", "playing", "finished", "cancelled"]))
    ruleset = fields.String()
    listed = fields.Boolean(metadata={"description": "Shown in the lobby (GET /v1/games)"})
    options = fields.Dict()
    decks = fields.Integer()
    rounds_total = fields.Integer()
    players = fields.List(fields.Nested(PlayerOut))
    open_seats = fields.List(fields.Integer())
    round = fields.Nested(RoundOut, allow_none=True)
    results = fields.List(fields.Nested(RoundResultOut))
    winners = fields.List(fields.Integer(), allow_none=True)
    fairness = fields.Nested(FairnessOut)
    timer = fields.Nested(TimerOut)
    rematch = fields.Nested(RematchLinkOut)


class MoveOut(Schema):
    type = fields.String(validate=validate.OneOf(["draw", "discard", "go_out"]))
    source = fields.String()
    card = card_field()
    discard = card_field()
    melds = fields.List(fields.List(card_field()))


class PlayerView(GameView):
    seat = fields.Integer()
    hand = fields.List(card_field())
    legal_moves = fields.List(fields.Nested(MoveOut))
    arrangement = fields.Nested(ArrangementOut, allow_none=True)
