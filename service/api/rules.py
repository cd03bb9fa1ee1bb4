"""Stateless rules endpoints: evaluate a hand, list the rulesets."""

from __future__ import annotations

from collections import Counter
from typing import Any

from flask import Response
from flask.views import MethodView

from service import bots
from service.api import schemas
from service.api.answers import json_response
from service.api.blueprint import Blueprint
from service.engine.cards import Card, Rank, parse_cards
from service.engine.errors import InvalidMeldsError, InvalidOptionError, MalformedError
from service.engine.melds import classify_meld
from service.engine.rules import (
    MAX_DECKS,
    OPTION_SPECS,
    PRESET_DESCRIPTIONS,
    PRESETS,
    Game,
    Options,
    preset,
)
from service.engine.solver import bounded_arrangement

blp = Blueprint("rules", __name__, url_prefix="/v1", description="Rules and hand evaluation")


@blp.route("/hands/evaluate")
class Evaluate(MethodView):
    @blp.arguments(schemas.EvaluateIn)
    @blp.response(200, schemas.EvaluateOut)
    @blp.alt_response(
        422,
        schema=schemas.Problem,
        description="Invalid cards or options",
        content_type="application/problem+json",
    )
    @blp.doc(operationId="evaluateHand")
    def post(self, body: dict[str, Any]) -> Response:
        """Best arrangement of a hand

        The melds leaving the fewest penalty points for `cards`, with the wild
        rank given directly or by `round` (under the options' schedule).
        """
        options = Options.from_dict(body["options"], base=preset(body["ruleset"]))
        cards = parse_cards(body["cards"])
        table_cards = [parse_cards(meld_cards) for meld_cards in body.get("table", [])]
        _check_copies(cards, [c for meld in table_cards for c in meld], options)
        if "round" in body:
            rounds = Game(2, options).rounds
            if body["round"] > len(rounds):
                raise InvalidOptionError(f"these options have {len(rounds)} rounds", field="round")
            wild = rounds[body["round"] - 1].wild_rank
        else:
            wild = Rank.parse(body["wild_rank"])
        table = []
        for meld_cards in table_cards:
            meld = classify_meld(meld_cards, wild, options)
            if meld is None:
                text = " ".join(c.code for c in meld_cards)
                raise InvalidMeldsError(f"{text} is not a meld", field="table")
            table.append(meld)
        arrangement = bounded_arrangement(cards, wild, options, table)
        out = arrangement.to_dict()
        out.setdefault("layoffs", [])
        out["wild_rank"] = wild.symbol
        return json_response(out)


def _check_copies(cards: list[Card], table: list[Card], options: Options) -> None:
    """No more copies of a card, nor jokers, in the hand and on the table than the
    decks of a game with these options hold (``decks``, else the most a game may
    have)."""
    decks = options.decks or MAX_DECKS
    copies = Counter(c for c in cards if not c.is_joker).most_common(1)
    if copies and copies[0][1] > decks:
        raise MalformedError(
            f"{copies[0][0].code} {copies[0][1]} times: a game has at most {decks} decks",
            field="cards",
        )
    copies = Counter(c for c in cards + table if not c.is_joker).most_common(1)
    if copies and copies[0][1] > decks:
        raise MalformedError(
            f"{copies[0][0].code} {copies[0][1]} times in the hand and on the table: "
            f"a game has at most {decks} decks",
            field="table",
        )
    jokers = sum(c.is_joker for c in cards + table)
    most = options.jokers_per_deck * decks
    if jokers > most:
        raise MalformedError(
            f"{jokers} jokers: {decks} decks with jokers_per_deck {options.jokers_per_deck} "
            f"hold {most}",
            field="cards",
        )


@blp.route("/rulesets")
class Rulesets(MethodView):
    @blp.doc(operationId="listRulesets")
    @blp.response(200, schemas.RulesetsOut)
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
