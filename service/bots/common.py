"""What every brain reads from a seat's view, parsed once.

A brain's only inputs are the view (built by :func:`service.engine.view.observe`
for the bot's own seat, or fetched from ``GET /v1/games/{id}/view``) and,
optionally, the game's public events.  :class:`Seen` is the part of the view the
brains use, in engine types.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from service.bots.evaluator import Context, codes_to_ids
from service.engine.cards import Card
from service.engine.moves import Discard, Draw, GoOut, Move, Source
from service.engine.options import Options


@dataclass(slots=True)
class Seen:
    """The parts of a seat's view the brains use."""

    seat: int
    num_players: int
    decks: int
    options: Options
    ctx: Context
    hand: tuple[int, ...]
    phase: str
    round_number: int
    hand_size: int
    discard_top: int | None
    discard_size: int
    stock_size: int
    went_out: int | None
    turns_taken: int
    table: list[dict[str, Any]]
    legal: list[Move]

    @classmethod
    def of(cls, view: dict[str, Any]) -> Seen:
        rnd = view["round"]
        options = Options.from_dict(view["options"])
        top = rnd["discard_top"]
        return cls(
            seat=view["seat"],
            num_players=len(view["players"]),
            decks=view["decks"],
            options=options,
            ctx=Context.get(rnd["wild_rank"], options),
            hand=codes_to_ids(view["hand"]),
            phase=rnd["phase"],
            round_number=rnd["number"],
            hand_size=rnd["hand_size"],
            discard_top=None if top is None else Card.parse(top).id,
            discard_size=rnd["discard_size"],
            stock_size=rnd["stock_size"],
            went_out=rnd["went_out"],
            turns_taken=rnd["turns_taken"],
            table=list(rnd.get("table") or ()),
            legal=[Move.from_dict(m) for m in view["legal_moves"]],
        )

    # -- the legal moves, by kind ------------------------------------------------

    def draw(self, source: Source) -> Move | None:
        for m in self.legal:
            if isinstance(m, Draw) and m.source is source:
                return m
        return None

    def forced_draw(self) -> Move | None:
        """The draw when only one source can be drawn from (or there is no top
        discard to weigh), else None: the bot has a choice."""
        stock = self.draw(Source.STOCK)
        take = self.draw(Source.DISCARD)
        if take is None or self.discard_top is None:
            assert stock is not None
            return stock
        return take if stock is None else None

    def deadwood_taking_top(self) -> int:
        """Deadwood left after taking the top discard and discarding the best
        other card (the taken card may not go straight back)."""
        assert self.discard_top is not None
        top = self.discard_top
        held = with_card(self.hand, top)
        return min(
            (self.ctx.deadwood(without(held, c)) for c in set(held) if c != top), default=10**6
        )

    def discards(self) -> dict[int, Discard]:
        return {m.card.id: m for m in self.legal if isinstance(m, Discard)}

    def go_outs(self) -> list[GoOut]:
        return [m for m in self.legal if isinstance(m, GoOut)]


STALEMATE_TURNS_PER_PLAYER = 40
"""A round this long is a stalemate: of 2,640 rounds between bots (2 and 4
players), the longest took 26 turns per player at 2 players and 15 at 4
(medians 6 and 4)."""
STALEMATE_SHAKE = 0.25
"""In a stalemate, the share of discards made at random."""


def stalemate_discard(seen: Seen, rng: random.Random) -> Discard | None:
    """A random discard, now and then, once the round has become a stalemate.

    Two deterministic greedy hands can hold each other's missing cards for ever:
    in a 5-card round (one meld of 5 to go out) with 5s wild, ``AH 5H 5S KC KD``
    against ``AS 5C 5D KH KS`` each keeps a set of four kings that only the
    other's cards complete, and both discard every card they draw.  Without a
    turn limit (``max_turns_per_round``) such a round never ends, and a game of
    bots alone (a simulation, or every seat on autopilot) plays forever.  Past
    :data:`STALEMATE_TURNS_PER_PLAYER` turns per player, one discard in four
    (:data:`STALEMATE_SHAKE`) is therefore a random card that is not wild, from
    the bot's seeded ``rng`` (so games still replay): the cycle breaks, as it
    would between people.  Never in a final turn, and never before the limit,
    so ordinary rounds are played exactly as before."""
    if seen.went_out is not None:
        return None
    if seen.turns_taken < STALEMATE_TURNS_PER_PLAYER * seen.num_players:
        return None
    if rng.random() >= STALEMATE_SHAKE:
        return None
    options = seen.discards()
    pool = [c for c in sorted(options) if not seen.ctx.is_wild(c)] or sorted(options)
    return options[rng.choice(pool)]


def without(hand: tuple[int, ...], card: int) -> tuple[int, ...]:
    """``hand`` (sorted ids) less one copy of ``card``."""
    i = hand.index(card)
    return hand[:i] + hand[i + 1 :]


def with_card(hand: tuple[int, ...], card: int) -> tuple[int, ...]:
    """``hand`` (sorted ids) plus ``card``, still sorted."""
    return tuple(sorted((*hand, card)))
