"""Stateless rules endpoints: evaluate a hand, list the rulesets."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView

from service import bots
from service.api.blueprint import Blueprint, document_errors
from service.api.responses import json_response
from service.api.schemas import inputs, outputs
from service.engine.evaluation import evaluate_hand
from service.engine.options import OPTION_SPECS, PRESET_DESCRIPTIONS, PRESETS, Options, preset

blp = Blueprint("rules", __name__, url_prefix="/v1", description="Rules and hand evaluation")


class Evaluate(MethodView):
    @blp.arguments(
        inputs.EvaluateIn(), example={"cards": ["7H", "8H", "9H", "3S", "KD"], "wild_rank": "3"}
    )
    @blp.response(200, outputs.EvaluateOut)
    @document_errors(blp, {422: "Invalid cards or options"})
    @blp.doc(operationId="evaluateHand")
    def post(self, body: dict[str, Any]) -> Response:
        """Best arrangement of a hand

        The melds leaving the fewest penalty points for `cards`, with the wild
        rank given directly or by `round` (under the options' schedule).
        """
        options = Options.from_dict(body["options"], base=preset(body["ruleset"]))
        arrangement, wild = evaluate_hand(
            body["cards"],
            options,
            wild_rank=body.get("wild_rank"),
            round_number=body.get("round"),
            table=body.get("table", ()),
        )
        out = arrangement.to_dict()
        out.setdefault("layoffs", [])
        out["wild_rank"] = wild.symbol
        return json_response(out)


class Rulesets(MethodView):
    @blp.doc(operationId="listRulesets")
    @blp.response(200, outputs.RulesetsOut)
    def get(self) -> Response:
        """Presets, options and bot levels

        Every preset with its option values, every option with its default and
        allowed values, and the bot levels a seat can be given.
        """
        return json_response(
            {
                "rulesets": [
                    {
                        "name": name,
                        "description": PRESET_DESCRIPTIONS[name],
                        "options": options.to_dict(),
                    }
                    for name, options in PRESETS.items()
                ],
                "options": [spec.describe() for spec in OPTION_SPECS.values()],
                "bots": list(bots.LEVELS),
            }
        )
