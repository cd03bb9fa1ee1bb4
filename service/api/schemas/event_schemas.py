"""The events of a game as ``GET /v1/games/{id}/events`` shows them: one schema
per event type, and ``Event``, their union discriminated by ``type``
(:func:`register_spec`).

The events are stored and sent as the engine and the hosting layer made them
(:class:`~service.engine.game_events.Event`); these schemas describe them, and a
test checks every event of played games against them.  Every event has ``seq``,
``id`` and ``type``; ``private: true`` marks one only its seat receives.
"""

from __future__ import annotations

from apispec import APISpec
from marshmallow import Schema, fields

from service.api.schemas.enums import autopilot_reason, bot_level, draw_source
from service.api.schemas.fields import (
    card_field,
    closed_set,
    component,
    discriminator,
    register_union,
)
from service.api.schemas.views import HandResultOut, MeldOut, RoundResultOut


class EventBase(Schema):
    seq = fields.Integer(required=True, metadata={"description": "Position in the game's log"})
    id = fields.String(
        required=True,
        metadata={
            "description": "The event's id, `<seq>.<tag>`: its seq and a tag of the game's "
            "history up to it (pass it as `after` or `Last-Event-ID`)",
            "example": "27.5f0c1a2b3c4d5e6f",
        },
    )
    private = fields.Boolean(
        metadata={"description": "Present (true) on an event only its seat receives"}
    )


def _seat(description: str = "The seat concerned") -> fields.Integer:
    return fields.Integer(required=True, metadata={"description": description})


class MoveFlags(Schema):
    bot = fields.Boolean(metadata={"description": "Present (true) when a bot made the move"})
    automatic = fields.Boolean(
        metadata={"description": "Present (true) when the turn timer made the move"}
    )


class GameCreatedEvent(EventBase):
    type = discriminator("game_created")
    seats = fields.Integer(required=True)
    ruleset = fields.String(metadata={"description": "Absent on a rematch (see rematch_of)"})
    rematch_of = fields.String(metadata={"description": "The finished game this one rematches"})


class PlayerJoinedEvent(EventBase):
    type = discriminator("player_joined")
    seat = _seat()
    name = fields.String(required=True)
    bot = bot_level(required=True, allow_none=True)


class GameStartedEvent(EventBase):
    type = discriminator("game_started")
    seats = fields.Integer(required=True)


class RoundStartedEvent(EventBase):
    type = discriminator("round_started")
    round = fields.Integer(required=True)
    hand_size = fields.Integer(required=True)
    wild_rank = fields.String(required=True)
    dealer = fields.Integer(required=True)
    turn = _seat("The seat to play first")
    discard_top = card_field(required=True)


class DealtEvent(EventBase):
    type = discriminator("dealt")
    private = fields.Boolean(required=True, metadata={"description": "Always true"})
    seat = _seat()
    hand = fields.List(card_field(), required=True)


class DrewEvent(EventBase, MoveFlags):
    type = discriminator("drew")
    seat = _seat()
    source = draw_source(required=True)
    card = card_field(
        "The card: public when taken from the discard pile; from the stock, only in the "
        "drawer's private copy"
    )


class StockReshuffledEvent(EventBase):
    type = discriminator("stock_reshuffled")
    stock_size = fields.Integer(required=True)


class DiscardedEvent(EventBase, MoveFlags):
    type = discriminator("discarded")
    seat = _seat()
    card = card_field(required=True)


class WentOutEvent(EventBase, MoveFlags):
    type = discriminator("went_out")
    seat = _seat()
    melds = fields.List(fields.Nested(MeldOut), required=True)
    discard = card_field(required=True)


class LaidDownEvent(EventBase, HandResultOut):
    """A final-turn hand laid down (the ``lay_off`` option): its melds, what it
    laid off onto the table and what it scored."""

    type = discriminator("laid_down")


class GoOutRefusedEvent(EventBase):
    type = discriminator("go_out_refused")
    seat = _seat()
    penalty = fields.Integer(required=True, metadata={"description": "Points added"})
    reason = fields.String(metadata={"description": "Why; only in the claimant's private copy"})


class GoOutClaimEvent(EventBase):
    type = discriminator("go_out_claim")
    private = fields.Boolean(required=True, metadata={"description": "Always true"})
    seat = _seat()
    move = component("GoOutMove", required=True)


class TurnEvent(EventBase):
    type = discriminator("turn")
    seat = _seat("The seat to play")


class RoundEndedEvent(EventBase):
    type = discriminator("round_ended")
    result = fields.Nested(RoundResultOut, required=True)
    totals = fields.List(fields.Integer(), required=True, metadata={"description": "By seat"})


class GameFinishedEvent(EventBase):
    type = discriminator("game_finished")
    winners = fields.List(fields.Integer(), required=True)
    totals = fields.List(fields.Integer(), required=True, metadata={"description": "By seat"})


class AutopilotOnEvent(EventBase):
    type = discriminator("autopilot_on")
    seat = _seat()
    level = bot_level(required=True)
    reason = autopilot_reason(required=True)


class AutopilotOffEvent(EventBase):
    type = discriminator("autopilot_off")
    seat = _seat()


class RematchCreatedEvent(EventBase):
    type = discriminator("rematch_created")
    game = fields.String(required=True, metadata={"description": "The rematch's id"})


class PlayerLeftEvent(EventBase):
    type = discriminator("player_left")
    seat = _seat("The seat that reopened")
    name = fields.String(required=True, metadata={"description": "The name it had"})
    reason = closed_set(
        "LeaveReason",
        ("removed",),
        "Present when the player did not leave by itself: `removed`, by the game's app",
    )


class PlayerRenamedEvent(EventBase):
    type = discriminator("player_renamed")
    seat = _seat()
    name = fields.String(required=True)
    previous = fields.String(required=True, metadata={"description": "The name it had"})


class PlayerResignedEvent(EventBase):
    type = discriminator("player_resigned")
    seat = _seat()
    name = fields.String(required=True)
    level = bot_level(required=True, metadata={"description": "The bot that plays it to the end"})


class GameCancelledEvent(EventBase):
    type = discriminator("game_cancelled")
    reason = closed_set(
        "CancelReason", ("last_player_left",), "Why the game was cancelled", required=True
    )


class GameAbortedEvent(EventBase):
    type = discriminator("game_aborted")
    reason = fields.String(
        required=True, metadata={"description": "Why the game's app aborted it, in its words"}
    )


EVENT_SCHEMAS: dict[str, type[Schema]] = {
    "game_created": GameCreatedEvent,
    "player_joined": PlayerJoinedEvent,
    "game_started": GameStartedEvent,
    "round_started": RoundStartedEvent,
    "dealt": DealtEvent,
    "drew": DrewEvent,
    "stock_reshuffled": StockReshuffledEvent,
    "discarded": DiscardedEvent,
    "went_out": WentOutEvent,
    "laid_down": LaidDownEvent,
    "go_out_refused": GoOutRefusedEvent,
    "go_out_claim": GoOutClaimEvent,
    "turn": TurnEvent,
    "round_ended": RoundEndedEvent,
    "game_finished": GameFinishedEvent,
    "autopilot_on": AutopilotOnEvent,
    "autopilot_off": AutopilotOffEvent,
    "rematch_created": RematchCreatedEvent,
    "player_left": PlayerLeftEvent,
    "player_renamed": PlayerRenamedEvent,
    "player_resigned": PlayerResignedEvent,
    "game_cancelled": GameCancelledEvent,
    "game_aborted": GameAbortedEvent,
}

EVENT_DESCRIPTION = """One event of a game, discriminated by `type`:

| type | when |
|---|---|
| `game_created` | the game was created (`seats`, `ruleset`, or `rematch_of`) |
| `player_joined` | a seat was taken (`seat`, `name`, `bot`) |
| `game_started` | every seat is taken; round 1 is dealt next |
| `round_started` | a round was dealt (`round`, `hand_size`, `wild_rank`, `dealer`, `turn`...) |
| `dealt` | private: your hand as dealt |
| `drew` | a seat drew (`source`; the `card` when public, or in your private copy) |
| `stock_reshuffled` | the discard pile (all but its top) became the stock |
| `discarded` | a seat discarded `card`, ending its turn |
| `went_out` | a seat went out with `melds`, discarding `discard` |
| `laid_down` | lay-off variant: a final-turn hand laid down, laid off and scored |
| `go_out_refused` | an invalid claim to go out cost `penalty` points |
| `go_out_claim` | private: the claim that was refused, as the move sent |
| `turn` | it is `seat`'s turn: every turn has one, a round's first too (after `dealt`) |
| `round_ended` | the round's `result` (every hand scored) and the `totals` |
| `game_finished` | the `winners` and the final `totals` |
| `autopilot_on` | a bot (`level`) plays the seat (`reason`: the player asked, or missed turns) |
| `autopilot_off` | the player took the seat back |
| `rematch_created` | the rematch `game` of this finished game |
| `player_left` | before the start, `seat`'s player left (`reason` `removed`: by its app) |
| `player_renamed` | before the start, `seat`'s player changed its `name` (from `previous`) |
| `player_resigned` | `seat`'s player resigned: a bot (`level`) plays it to the end |
| `game_cancelled` | the game ended before its start (`reason`: its last player left) |
| `game_aborted` | the game's app aborted it (`reason`: its text): the game is over |

A move made for a seat (`drew`, `discarded`, `went_out`) carries `"bot": true` when a
bot made it, `"automatic": true` when the turn timer did."""


def register_spec(spec: APISpec) -> None:
    """Add every event type and ``Event``, their union discriminated by ``type``."""
    register_union(spec, "Event", EVENT_SCHEMAS, EVENT_DESCRIPTION)
