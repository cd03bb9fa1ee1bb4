"""The closed sets of the HTTP contract, each a named enum of the spec
(:func:`~service.api.schemas.fields.closed_set`): one type per set in the
generated clients, whichever schema holds it."""

from __future__ import annotations

from typing import Any

from marshmallow import fields

from service import bots
from service.api.problems import CODES
from service.api.schemas.fields import closed_set
from service.engine.options import PRESETS

GAME_STATUSES = ("waiting", "playing", "finished", "cancelled", "aborted")


def bot_level(**kwargs: Any) -> fields.String:
    return closed_set("BotLevel", bots.LEVELS, "A bot's level (GET /v1/rulesets)", **kwargs)


def game_status(**kwargs: Any) -> fields.String:
    return closed_set(
        "GameStatus",
        GAME_STATUSES,
        "Waiting for players, playing, finished, cancelled (left by all before the start), "
        "or aborted (by its app)",
        **kwargs,
    )


def draw_source(**kwargs: Any) -> fields.String:
    return closed_set("DrawSource", ("stock", "discard"), "Where a card is drawn from", **kwargs)


def meld_kind(**kwargs: Any) -> fields.String:
    return closed_set("MeldKind", ("set", "run"), "Same rank, or a suited sequence", **kwargs)


def turn_phase(**kwargs: Any) -> fields.String:
    return closed_set(
        "TurnPhase", ("draw", "discard"), "The seat to play draws, then discards", **kwargs
    )


def round_end(**kwargs: Any) -> fields.String:
    return closed_set(
        "RoundEnd",
        ("went_out", "turn_limit"),
        "Someone went out, or the round reached max_turns_per_round",
        **kwargs,
    )


def autopilot_reason(**kwargs: Any) -> fields.String:
    return closed_set(
        "AutopilotReason",
        ("player", "missed_turns"),
        "The player asked, or the turn timer after missed turns",
        **kwargs,
    )


def ruleset(**kwargs: Any) -> fields.String:
    return closed_set("Ruleset", PRESETS, "A preset of the options (GET /v1/rulesets)", **kwargs)


def problem_code(**kwargs: Any) -> fields.String:
    return closed_set("ProblemCode", CODES, "The stable codes of docs/ERRORS.md", **kwargs)


def probe_status(**kwargs: Any) -> fields.String:
    return closed_set("ProbeStatus", ("ok", "ready"), "Alive, or ready to serve", **kwargs)
