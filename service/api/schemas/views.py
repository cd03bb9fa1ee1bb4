"""The game's views as the API answers them (``GET /v1/games/{id}``, a seat's view,
a move's answer): dumped straight with orjson from dicts built by the engine's
view function; these schemas describe them (and tests check live responses
against the generated spec).

Every field the view always holds is ``required``; ``allow_none`` marks the
ones that may be null (docs/SDK.md has the conventions)."""

from __future__ import annotations

from marshmallow import Schema, fields

from service.api.schemas.enums import bot_level, game_status, meld_kind, round_end, turn_phase
from service.api.schemas.fields import card_field, component


def _required_int(description: str | None = None) -> fields.Integer:
    return fields.Integer(
        required=True, metadata={"description": description} if description else {}
    )


def _cards() -> fields.List[str]:
    return fields.List(card_field(), required=True)


class MeldOut(Schema):
    kind = meld_kind(required=True)
    cards = _cards()


class LayOffOut(Schema):
    target = _required_int("Index of the table meld extended")
    cards = _cards()


class ArrangementOut(Schema):
    melds = fields.List(fields.Nested(MeldOut), required=True)
    deadwood = _cards()
    points = _required_int("Penalty points of the deadwood")
    layoffs = fields.List(
        fields.Nested(LayOffOut), metadata={"description": "Present when cards are laid off"}
    )


class HandResultOut(ArrangementOut):
    seat = _required_int()
    points = _required_int("The round's score: deadwood times the multiplier, plus any penalty")
    penalty = fields.Integer(metadata={"description": "Present when a false go-out cost points"})


class RoundResultOut(Schema):
    number = _required_int()
    wild_rank = fields.String(required=True)
    went_out = fields.Integer(required=True, allow_none=True)
    ended_by = round_end(required=True)
    multiplier = _required_int()
    hands = fields.List(fields.Nested(HandResultOut), required=True)
    table = fields.List(
        fields.Nested(MeldOut), metadata={"description": "Present when melds were laid down"}
    )


class TableMeldOut(MeldOut):
    seat = _required_int("The seat that laid it down")


class RoundOut(Schema):
    number = _required_int()
    hand_size = _required_int()
    wild_rank = fields.String(required=True)
    dealer = _required_int()
    turn = _required_int("The seat to play")
    phase = turn_phase(required=True)
    stock_size = _required_int()
    discard_top = card_field(required=True, allow_none=True)
    discard_size = _required_int()
    went_out = fields.Integer(required=True, allow_none=True)
    final_turns_left = fields.Integer(required=True, allow_none=True)
    turns_taken = _required_int()
    table = fields.List(fields.Nested(TableMeldOut), required=True)


class PlayerOut(Schema):
    seat = _required_int()
    name = fields.String(required=True, allow_none=True, metadata={"description": "Null: open"})
    bot = bot_level(required=True, allow_none=True)
    autopilot = fields.Boolean(
        required=True, metadata={"description": "A human seat played by a bot for now"}
    )
    resigned = fields.Boolean(
        required=True, metadata={"description": "Its player resigned: a bot plays it to the end"}
    )
    hand_size = _required_int()
    total = _required_int()
    player_id = fields.String(
        allow_none=True,
        metadata={
            "description": "Apps mode, to the game's app only (its secret key): the app's id "
            "of the player bound to the seat (null: none)"
        },
    )


class FairnessOut(Schema):
    commitment = fields.String(
        required=True, metadata={"description": "SHA-256 of the game's secret seed"}
    )
    seed = fields.String(
        required=True, allow_none=True, metadata={"description": "Revealed once finished"}
    )
    seeded = fields.Boolean(required=True)


class TimerOut(Schema):
    turn_timeout_seconds = fields.Integer(required=True, allow_none=True)
    autopilot_after_missed_turns = fields.Integer(required=True, allow_none=True)
    deadline = fields.Float(
        required=True,
        allow_none=True,
        metadata={"description": "Unix time when the current turn times out"},
    )


class RematchLinkOut(Schema):
    of = fields.String(
        required=True, allow_none=True, metadata={"description": "The game this one rematches"}
    )
    game = fields.String(
        required=True, allow_none=True, metadata={"description": "This game's rematch"}
    )


class GameView(Schema):
    id = fields.String(required=True)
    version = _required_int(
        "Counts the game's changes (also the ETag): each write adds one, however many "
        "events it makes: a move is one change, each stretch of the bots' turns that "
        "follows it (played by the service after it) another, and so is each overdue "
        "turn the timer plays"
    )
    status = game_status(required=True)
    ruleset = fields.String(required=True)
    listed = fields.Boolean(
        required=True, metadata={"description": "Shown in the lobby (GET /v1/games)"}
    )
    options = component("Options", required=True)
    decks = _required_int()
    rounds_total = _required_int()
    players = fields.List(fields.Nested(PlayerOut), required=True)
    open_seats = fields.List(fields.Integer(), required=True)
    round = fields.Nested(RoundOut, required=True, allow_none=True)
    results = fields.List(fields.Nested(RoundResultOut), required=True)
    winners = fields.List(fields.Integer(), required=True, allow_none=True)
    fairness = fields.Nested(FairnessOut, required=True)
    timer = fields.Nested(TimerOut, required=True)
    rematch = fields.Nested(RematchLinkOut, required=True)


class PlayerView(GameView):
    seat = _required_int()
    hand = _cards()
    legal_moves = fields.List(
        component("Move"),
        required=True,
        metadata={"description": "Every legal move; post any of them back as it is"},
    )
    arrangement = fields.Nested(
        ArrangementOut,
        required=True,
        allow_none=True,
        metadata={
            "description": "The best arrangement of `hand`; null while the seat holds no "
            "hand (before round 1 is dealt, once the game has ended)"
        },
    )
