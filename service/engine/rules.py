"""Game rules: what a number of players and the options make of a game -- its
decks, its round schedule -- and the points of a card left in deadwood.

:class:`Game` binds options (:mod:`service.engine.options`) to a number of
players and derives what follows from them.  Nothing here changes once built.

>>> game = Game(4, Options.from_dict({"extra_rounds": 2}))
>>> game.decks, len(game.rounds)
(2, 13)
>>> game.rounds[-1]
RoundSpec(number=13, hand_size=15, wild_rank=<Rank.TWO: 2>)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache

from service.engine.cards import Card, Rank
from service.engine.errors import InvalidOptionError
from service.engine.options import (
    CLASSIC,
    Aces,
    FaceCardPoints,
    Options,
    RoundOrder,
)

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "TURNS_PER_PLAYER_CAP",
    "Game",
    "RoundSpec",
    "card_points",
    "min_decks",
    "points_table",
    "wild_rank_for",
]

MIN_PLAYERS = 2
MAX_PLAYERS = 8
TURNS_PER_PLAYER_CAP = 100
"""With ``max_turns_per_round`` null, a round still ends, scored as it stands, after
this many turns per player: a round that nobody goes out of would otherwise never
end (and a hosted game would grow without bound).  Real rounds end far sooner."""


@dataclass(frozen=True, slots=True)
class RoundSpec:
    """One round of the schedule: its 1-based number, hand size and wild rank."""

    number: int
    hand_size: int
    wild_rank: Rank


def wild_rank_for(hand_size: int) -> Rank:
    """The wild rank of a round dealing ``hand_size`` cards.

    >>> wild_rank_for(3), wild_rank_for(11), wild_rank_for(14), wild_rank_for(15)
    (<Rank.THREE: 3>, <Rank.JACK: 11>, <Rank.ACE: 1>, <Rank.TWO: 2>)
    """
    if 3 <= hand_size <= 13:
        return Rank(hand_size)
    if hand_size == 14:
        return Rank.ACE
    if hand_size == 15:
        return Rank.TWO
    raise ValueError(f"no round deals {hand_size} cards")


def min_decks(num_players: int, largest_hand: int) -> int:
    """The fewest decks for a table (RULES.md section 1).

    >>> [min_decks(n, 13) for n in (2, 3, 4, 5, 8)]
    [1, 2, 2, 2, 3]
    """
    if num_players == 2:
        return 1
    return max(2, math.ceil(num_players * (largest_hand + 2) / 52))


@dataclass(frozen=True, slots=True)
class Game:
    """The rules of one game: player count and options, and what they imply."""

    num_players: int
    options: Options = CLASSIC
    rounds: tuple[RoundSpec, ...] = dataclasses.field(init=False, repr=False, compare=False)
    """The round schedule (set once built: states ask for it on every move)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "rounds", _schedule(self.largest_hand, self.options.round_order))
        if not MIN_PLAYERS <= self.num_players <= MAX_PLAYERS:
            raise InvalidOptionError(
                f"a game has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {self.num_players}",
                field="players",
            )
        needed = min_decks(self.num_players, self.largest_hand)
        if self.options.decks is not None and self.options.decks < needed:
            raise InvalidOptionError(
                f"option 'decks' must be at least {needed} for {self.num_players} players",
                field="decks",
            )

    @property
    def largest_hand(self) -> int:
        return 13 + self.options.extra_rounds

    @property
    def turn_limit(self) -> int:
        """Turns after which a round without a going out ends: ``max_turns_per_round``,
        or :data:`TURNS_PER_PLAYER_CAP` per player when that is null.

        >>> Game(3).turn_limit, Game(3, Options(max_turns_per_round=12)).turn_limit
        (300, 12)
        """
        limit = self.options.max_turns_per_round
        return TURNS_PER_PLAYER_CAP * self.num_players if limit is None else limit

    @property
    def decks(self) -> int:
        """Decks in the shoe: the option, or the minimum for the table."""
        return self.options.decks or min_decks(self.num_players, self.largest_hand)

    def round_multiplier(self, spec: RoundSpec) -> int:
        """2 in the face-card wild rounds with ``double_face_rounds``, else 1."""
        if self.options.double_face_rounds and spec.wild_rank >= Rank.JACK:
            return 2
        return 1


@lru_cache(maxsize=16)
def _schedule(largest_hand: int, order: RoundOrder) -> tuple[RoundSpec, ...]:
    sizes = list(range(3, largest_hand + 1))
    if order is RoundOrder.UP_DOWN:
        sizes += sizes[::-1]
    return tuple(RoundSpec(i + 1, size, wild_rank_for(size)) for i, size in enumerate(sizes))


def card_points(card: Card, wild_rank: Rank, options: Options) -> int:
    """Penalty points of ``card`` left in deadwood (RULES.md sections 6 and 7).

    >>> o = Options()
    >>> card_points(Card.parse("KD"), Rank.SEVEN, o), card_points(Card.parse("7C"), Rank.SEVEN, o)
    (10, 7)
    >>> card_points(Card.parse("7C"), Rank.SEVEN, Options(unused_wild_points=15))
    15
    >>> card_points(Card.parse("AS"), Rank.SEVEN, Options(aces=Aces.HIGH_OR_LOW))
    15
    """
    if card.is_joker:
        return 20
    rank = card.rank
    assert rank is not None
    if options.unused_wild_points is not None and rank == wild_rank:
        return options.unused_wild_points
    if rank == Rank.ACE:
        return 15 if options.aces is Aces.HIGH_OR_LOW else 1
    if rank >= Rank.JACK:
        return int(rank) if options.face_card_points is FaceCardPoints.RANK else 10
    return int(rank)


def points_table(wild_rank: Rank, options: Options) -> tuple[int, ...]:
    """:func:`card_points` of every card, indexed by ``Card.id`` (0..52): for
    loops over a hand, which then pay one lookup per card instead of a call.

    >>> table = points_table(Rank.SEVEN, Options())
    >>> table[Card.parse("KD").id], table[Card.parse("7C").id], table[Card.parse("JK").id]
    (10, 7, 20)
    """
    # keyed by the scoring options alone (not a new Options: building one costs
    # more than the lookup, and views ask for the table several times)
    return _points_table(
        wild_rank, options.aces, options.face_card_points, options.unused_wild_points
    )


@lru_cache(maxsize=512)
def _points_table(
    wild_rank: Rank, aces: Aces, face_card_points: FaceCardPoints, unused_wild_points: int | None
) -> tuple[int, ...]:
    scoring = Options(aces, face_card_points, unused_wild_points)
    return tuple(card_points(Card.from_id(i), wild_rank, scoring) for i in range(53))
