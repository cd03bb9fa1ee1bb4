"""The round in play -- its piles, hands and whose turn it is to do what -- and
how a round is dealt."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from service.engine.cards import Card, build_shoe
from service.engine.game_events import Event, HandResult
from service.engine.melds import Meld
from service.engine.rules import Game
from service.engine.shuffle import Shuffler


class Phase(enum.Enum):
    """What the player whose turn it is must do next."""

    DRAW = "draw"
    DISCARD = "discard"


@dataclass(slots=True)
class Round:
    """The round in play.  Piles keep their top card last; hands stay sorted."""

    index: int
    dealer: int
    turn: int
    stock: list[Card]
    discard: list[Card]
    hands: list[list[Card]]
    phase: Phase = Phase.DRAW
    went_out: int | None = None
    final_turns_left: int = 0
    turns_taken: int = 0
    drawn_from_discard: Card | None = None
    claim_refused: bool = False
    reshuffles: int = 0
    table: list[Meld] = field(default_factory=list)
    table_owners: list[int] = field(default_factory=list)
    scored: dict[int, HandResult] = field(default_factory=dict)
    penalties: list[int] = field(default_factory=list)


def deal_round(
    game: Game, shuffler: Shuffler, index: int, dealer: int
) -> tuple[Round, list[Event]]:
    """Round ``index`` of ``game``'s schedule dealt by ``dealer`` from the shoe as
    ``shuffler`` shuffles it for that round, and the events of the deal (each
    seat's hand seen by that seat only), ending with the ``turn`` of the round's
    first player."""
    spec = game.rounds[index]
    n = game.num_players
    shoe = build_shoe(game.decks, game.options.jokers_per_deck)
    shoe = shuffler.shuffled(shoe, "round", spec.number)
    hands: list[list[Card]] = [[] for _ in range(n)]
    for _ in range(spec.hand_size):
        for k in range(n):
            hands[(dealer + 1 + k) % n].append(shoe.pop())
    for hand in hands:
        hand.sort()
    discard = [shoe.pop()]
    turn = (dealer + 1) % n
    rnd = Round(index, dealer, turn, shoe, discard, hands, penalties=[0] * n)
    events = [
        Event(
            "round_started",
            {
                "round": spec.number,
                "hand_size": spec.hand_size,
                "wild_rank": spec.wild_rank.symbol,
                "dealer": dealer,
                "turn": turn,
                "discard_top": discard[-1].code,
            },
        )
    ]
    events += [Event("dealt", {"seat": s, "hand": [c.code for c in hands[s]]}, s) for s in range(n)]
    events.append(Event("turn", {"seat": turn}))  # every turn has its event, the first too
    return rnd, events
