"""A hand evaluated from outside a game (``POST /v1/hands/evaluate``): the best
arrangement of some cards under given options, with the wild rank named or
found by round, against melds already on a table, within what a game could hold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from service.engine.cards import Card, Rank, parse_cards
from service.engine.errors import InvalidMeldsError, InvalidOptionError, MalformedError
from service.engine.melds import Arrangement, classify_meld
from service.engine.options import MAX_DECKS, Options
from service.engine.rules import Game
from service.engine.solver import bounded_arrangement


def evaluate_hand(
    cards: Sequence[str],
    options: Options,
    *,
    wild_rank: str | None = None,
    round_number: int | None = None,
    table: Sequence[Sequence[str]] = (),
) -> tuple[Arrangement, Rank]:
    """The best arrangement of ``cards`` and the wild rank it was found with:
    ``wild_rank``, else that of round ``round_number`` under ``options``.  Cards
    may be laid off onto the ``table``'s melds; the search is bounded
    (:func:`~service.engine.solver.bounded_arrangement`).

    >>> arrangement, wild = evaluate_hand(["7C", "7D", "7H", "KS"], Options(), wild_rank="2")
    >>> arrangement.points, wild.symbol
    (10, '2')
    """
    hand = parse_cards(list(cards))
    table_cards = [parse_cards(list(meld_cards)) for meld_cards in table]
    _check_copies(hand, [c for meld in table_cards for c in meld], options)
    if round_number is not None:
        rounds = Game(2, options).rounds
        if round_number > len(rounds):
            raise InvalidOptionError(f"these options have {len(rounds)} rounds", field="round")
        wild = rounds[round_number - 1].wild_rank
    elif wild_rank is not None:
        wild = Rank.parse(wild_rank)
    else:
        raise MalformedError("give a wild rank or a round", field="wild_rank")
    melds = []
    for meld_cards in table_cards:
        meld = classify_meld(meld_cards, wild, options)
        if meld is None:
            text = " ".join(c.code for c in meld_cards)
            raise InvalidMeldsError(f"{text} is not a meld", field="table")
        melds.append(meld)
    return bounded_arrangement(hand, wild, options, melds), wild


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
