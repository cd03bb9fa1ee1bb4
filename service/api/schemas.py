"""The HTTP contract as marshmallow schemas: input validation and the OpenAPI spec.

Responses on hot paths are dumped straight with orjson from dicts built by the
engine's view function; these schemas describe them (and a test checks live
responses against the generated spec).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from marshmallow import INCLUDE, Schema, ValidationError, fields, validate, validates_schema

from service.engine.rules import MAX_PLAYERS


class FullMatch(validate.Regexp):
    """``validate.Regexp`` matching the whole value: with ``re.match`` a pattern
    ending in ``$`` also takes a value ending in a newline.  The pattern stays
    documented in the spec (apispec reads ``regex``)."""

    def __call__(self, value: str) -> str:
        if self.regex.fullmatch(value) is None:
            raise ValidationError(self._format_error(value))
        return value


NAME = FullMatch(
    r"^[^\x00-\x1f\x7f<>]{1,40}$",
    error="names are 1 to 40 characters, without control characters or < >",
)

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
"""Unicode categories no name may hold: controls (C0 and C1), format characters
(bidi overrides and isolates, zero-width ones, the BOM, the soft hyphen), line
and paragraph separators, surrogates, private use and unassigned code points --
what renders as nothing, or moves or disguises the text around it."""


def _shown_as_is(name: str) -> str:
    hidden = next((c for c in name if unicodedata.category(c) in HIDDEN_CATEGORIES), None)
    if hidden is not None:
        raise ValidationError(
            f"names may not hold U+{ord(hidden):04X} ({unicodedata.category(hidden)}):"
            " no control, format, separator, private-use or unassigned characters"
        )
    if name != name.strip():
        raise ValidationError("names may not begin or end with white space")
    return name


class Name(fields.String):
    """A player's name, normalised to NFC (so that one name has one spelling,
    and its length counts what is shown), then validated: :data:`NAME` and no
    character of :data:`HIDDEN_CATEGORIES`, no white space at either end."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(validate=[NAME, _shown_as_is], **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        return unicodedata.normalize("NFC", text)


_CARD_CODE = re.compile(r"[0-9A-Za-z]{1,3}")


def _card_characters(value: str) -> str:
    # the engine reads the code itself (MALFORMED when it names no card); no
    # white space or other character may reach it (Card.parse strips, upper-cases)
    if _CARD_CODE.fullmatch(value) is None:
        raise ValidationError("a card code: rank then suit in ASCII (7H, 10S, th, JK)")
    return value


def card_field(**kwargs: object) -> fields.String:
    return fields.String(
        validate=[validate.Length(1, 3), _card_characters],
        metadata={
            "description": "Card code: A 2..10 J Q K + C D H S, or JK (T, lower case accepted)",
            "example": "7H",
        },
        **kwargs,  # type: ignore[arg-type]
    )


def integer(**kwargs: Any) -> fields.Integer:
    """A JSON integer, and only that: no float (``2.5``, nor ``2.0``), string or boolean."""
    return fields.Integer(strict=True, **kwargs)


class QueryInteger(fields.Integer):
    """An integer of the query string in ASCII digits: ``int()`` would also read
    ``１`` (full width), ``٣``, ``1_0``, ``+1`` and `` 1``."""

    PATTERN = re.compile(r"[0-9]{1,20}")

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if not isinstance(value, str) or self.PATTERN.fullmatch(value) is None:
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class QueryNumber(fields.Float):
    """A number of the query string in ASCII digits, with an optional fraction
    (``0.5``): no exponent, sign, underscore, ``nan`` or ``inf``."""

    PATTERN = re.compile(r"[0-9]{1,10}(\.[0-9]{1,10})?")

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> float:
        if not isinstance(value, str) or self.PATTERN.fullmatch(value) is None:
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


# -- input ---------------------------------------------------------------------


class PlayerIn(Schema):
    name = Name(required=True)
    bot = fields.String(
        allow_none=True,
        load_default=None,
        metadata={"description": "Bot level playing this seat; see GET /v1/rulesets"},
    )


class CreateGameIn(Schema):
    players = fields.List(
        fields.Nested(PlayerIn), required=True, validate=validate.Length(1, MAX_PLAYERS)
    )
    seats = integer(
        validate=validate.Range(2, MAX_PLAYERS),
        metadata={"description": "Total seats; defaults to the number of players"},
    )
    ruleset = fields.String(load_default="classic", validate=validate.Length(1, 40))
    options = fields.Dict(
        keys=fields.String(),
        load_default=dict,
        metadata={"description": "Option overrides over the ruleset; see GET /v1/rulesets"},
    )
    seed = fields.String(
        validate=validate.Length(1, 128),
        metadata={"description": "Honoured only when the server allows seeded games"},
    )
    turn_timeout_seconds = integer(
        validate=validate.Range(5, 86400),
        allow_none=True,
        metadata={"description": "Per-turn time limit; an overdue turn is played automatically"},
    )
    autopilot_after_missed_turns = integer(
        validate=validate.Range(1, 100),
        allow_none=True,
        metadata={"description": "Hand a seat to a bot after this many automatic turns in a row"},
    )


class JoinIn(Schema):
    name = Name(required=True)


class DrawMove(Schema):
    type = fields.String(required=True, validate=validate.Equal("draw"))
    source = fields.String(required=True, validate=validate.OneOf(["stock", "discard"]))


class DiscardMove(Schema):
    type = fields.String(required=True, validate=validate.Equal("discard"))
    card = card_field(required=True)


class GoOutMove(Schema):
    type = fields.String(required=True, validate=validate.Equal("go_out"))
    discard = card_field(required=True)
    melds = fields.List(
        fields.List(card_field(), validate=validate.Length(1, 16)),
        validate=validate.Length(0, 16),
        metadata={"description": "Optional: without it the service finds an arrangement"},
    )


MOVE_SCHEMAS: dict[str, type[Schema]] = {
    "draw": DrawMove,
    "discard": DiscardMove,
    "go_out": GoOutMove,
}


LARGEST_HAND = 15
"""Cards a hand holds between turns at most (round 13 of ``extra_rounds``)."""
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
    options = fields.Dict(keys=fields.String(), load_default=dict)
    ruleset = fields.String(load_default="classic", validate=validate.Length(1, 40))
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


class EventsQuery(Schema):
    after = QueryInteger(load_default=0, validate=validate.Range(0, 2**53))
    wait = QueryNumber(load_default=0.0, validate=validate.Range(0, 30))


# -- output --------------------------------------------------------------------


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


class EvaluateOut(ArrangementOut):
    wild_rank = fields.String(metadata={"description": "The wild rank used"})


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
    status = fields.String(validate=validate.OneOf(["waiting", "playing", "finished"]))
    ruleset = fields.String()
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


class JoinOut(Schema):
    seat = fields.Integer()
    token = fields.String()
    version = fields.Integer()
    status = fields.String()


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
