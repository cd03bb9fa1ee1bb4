"""Whole hands solved with the C search against the Python alone.

The C searches; preparing the hand and turning the plan into melds stay in
Python either way.  These tests hold whole answers to the Python's: the same
melds (kinds and cards, in order), deadwood and points, the same going-out
discards in the same order with the same melds, the same legal moves.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from service.engine import (
    Aces,
    Arrangement,
    Card,
    Draw,
    FaceCardPoints,
    Game,
    Meld,
    Options,
    Rank,
    Source,
    State,
    build_shoe,
    legal_moves,
    parse_cards,
    points_table,
)
from service.engine.solver import (
    best_arrangement,
    clear_memos,
    going_out_discards,
    going_out_melds,
    switch,
)
from tests.engine.native_build import needs_native

FREE_OPTIONS = [
    Options(
        aces=aces,
        face_card_points=face,
        unused_wild_points=uwp,
        jokers_per_deck=2,
        all_wild_melds=aw,
    )
    for aces in Aces
    for face in FaceCardPoints
    for uwp in (None, 15)
    for aw in (False, True)
]

WAYS = ("c", "python")


def both_ways(fn: Any, *args: Any) -> list[Any]:
    """``fn(*args)`` with the C search, then with the Python alone (as
    ``SOLVER=python``) -- with cold memos each time."""
    out = []
    for way in WAYS:
        with pytest.MonkeyPatch.context() as mp:
            if way == "python":
                mp.setattr(switch, "USE_C", False)  # SOLVER=python
            clear_memos()
            out.append(fn(*args))
    clear_memos()
    return out


def shape(a: Arrangement) -> tuple[object, ...]:
    """An arrangement spelled out, so that a difference shows in the message."""
    melds = [(m.kind.value, [c.code for c in m.cards]) for m in a.melds]
    layoffs = [(lo.target, [c.code for c in lo.cards]) for lo in a.layoffs]
    return melds, [c.code for c in a.deadwood], a.points, layoffs


def go_out_shape(found: list[tuple[Card, tuple[Meld, ...]]]) -> list[object]:
    return [(c.code, [(m.kind.value, [x.code for x in m.cards]) for m in ms]) for c, ms in found]


def check_hand(cards: list[Card], wild: Rank, opts: Options, more: Sequence[Card] = ()) -> None:
    """Every answer about ``cards`` with the C search against the Python's: the
    arrangement, the melds of going out, and the going-out discards of every
    card, of the cards a floor lets through (as legal_moves asks) and of ``more``."""
    arranged = both_ways(best_arrangement, cards, wild, opts)
    assert shape(arranged[1]) == shape(arranged[0])
    assert arranged[1] == arranged[0]
    melded = both_ways(going_out_melds, cards, wild, opts)
    assert melded[1] == melded[0]
    pts = points_table(wild, opts)
    floor = arranged[0].points
    unique = [Card.from_id(i) for i in sorted({c.id for c in cards})]
    for candidates in (cards, [c for c in unique if pts[c.id] >= floor], more):
        found = both_ways(going_out_discards, cards, wild, opts, candidates)
        assert go_out_shape(found[1]) == go_out_shape(found[0])
        assert found[1] == found[0]


SIZES = list(range(17)) + [12, 13, 14, 15, 16] * 3
"""Hand sizes, drawn evenly (not smallest first), those of the game's last rounds more often."""


@st.composite
def free_hands(draw: st.DrawFn) -> tuple[list[Card], Rank, Options, list[Card]]:
    """A hand of 0..16 cards from 1..3 decks with 0..2 jokers a deck, any wild rank
    and scoring; often from a few ranks only (wild-rank cards and jokers kept),
    so that melds, wilds and duplicates abound; and a list of candidates (any
    of its cards, some twice)."""
    decks, jokers = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    wild = Rank(draw(st.integers(1, 13)))
    shoe = build_shoe(decks, jokers)
    if draw(st.booleans()):
        ranks = draw(st.sets(st.sampled_from(list(Rank)), min_size=2, max_size=5))
        shoe = [c for c in shoe if c.is_joker or c.rank == wild or c.rank in ranks]
    size = min(len(shoe), draw(st.sampled_from(SIZES)))
    picks = st.lists(st.integers(0, len(shoe) - 1), min_size=size, max_size=size, unique=True)
    cards = sorted(shoe[i] for i in draw(picks))
    opts = Options(
        aces=draw(st.sampled_from(list(Aces))),
        face_card_points=draw(st.sampled_from(list(FaceCardPoints))),
        # 20 (a joker's points) and 25 put wild-rank cards level with or after jokers
        unused_wild_points=draw(st.sampled_from([None, 0, 15, 20, 25])),
        jokers_per_deck=jokers,
        all_wild_melds=draw(st.booleans()),
    )
    more = draw(st.lists(st.sampled_from(cards), max_size=6)) if cards else []
    return cards, wild, opts, more


@needs_native
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(free_hands())
def test_whole_hands_agree(hand: tuple[list[Card], Rank, Options, list[Card]]) -> None:
    cards, wild, opts, more = hand
    check_hand(cards, wild, opts, more)
    wilds = sum(c.is_joker or c.rank == wild for c in cards)
    event(f"{len(cards) // 5 * 5}+ cards, {min(wilds, 4)}{'+' if wilds >= 4 else ''} wilds")


@needs_native
@pytest.mark.parametrize(
    "text",
    [
        "KC JK JK JK",  # KC the only wild-rank card: without it, no group of wilds alone
        "KC JK JK JK JK",
        "KC KD JK JK JK",
        "KC JK JK JK 4H 5H 6H",  # (the run takes the jokers: the rule does not count)
        "KC JK JK JK 4H 5H 6H 9S 9D",
        "KC KD JK JK JK 4H 5H 6H",
        "KC JK JK 4H 5H 6H",  # two wilds left: the all-wild rule cannot count
        "KC 4H 6H 8S 8D",  # one wild, then none: a card without a partner
        "JK 4H 6H 9C 9D",
        "KC KC KD JK 3S 4S 5S 5D",  # duplicates of a wild-rank card
        "AS 2S QS KS KH JK",  # aces high or low
    ],
)
@pytest.mark.parametrize("opts", FREE_OPTIONS[::3])
def test_wild_drops_agree(text: str, opts: Options) -> None:
    """Wild candidates, searched apart from the natural ones (dropping the only
    wild-rank card can turn the all-wild rule off): every card a candidate,
    kings wild."""
    cards = parse_cards(text)
    check_hand(cards, Rank.KING, opts, cards[:3] + cards[:1])


def dealt_positions(count: int) -> Iterator[tuple[State, int]]:
    """States of real games just after a draw: a round dealt by the engine (any
    round, 2 to 8 players, so 1 to 3 decks), its first player's stock draw."""
    rng = random.Random(31)
    for k in range(count):
        opts = FREE_OPTIONS[k % len(FREE_OPTIONS)]
        game = Game(rng.choice([2, 2, 3, 4, 5, 8]), opts)
        state = State.new(game, f"{k:064x}")
        index = rng.choice([len(game.rounds) - 1, rng.randrange(len(game.rounds))])
        state.deal(index, rng.randrange(game.num_players))
        assert state.round is not None
        seat = state.round.turn
        state.apply(seat, Draw(Source.STOCK))
        yield state, seat


@needs_native
def test_dealt_hands_agree() -> None:
    """A few hundred hands of real deals (13 cards at the last round, 14 after
    the draw), and the legal moves of the drawing player, both ways."""
    hands = go_outs = 0
    for state, seat in dealt_positions(300):
        assert state.round is not None
        wild, opts = state.spec.wild_rank, state.game.options
        for s, hand in enumerate(state.round.hands):
            if s == seat or s == (seat + 1) % state.game.num_players:
                check_hand(list(hand), wild, opts)
                hands += 1
        moves = both_ways(legal_moves, state, seat)
        assert moves[1] == moves[0]
        floor = best_arrangement(state.round.hands[seat], wild, opts).points
        with_floor = both_ways(partial(legal_moves, floor=floor), state, seat)
        assert with_floor == [moves[0]] * 2
        go_outs += sum(m.type == "go_out" for m in moves[0])
    assert hands == 600 and go_outs >= 30


@needs_native
@pytest.mark.parametrize("text", ["4H" + " JK" * 13, "4H 5H" + " JK" * 12, "4H 9C" + " JK" * 9])
def test_more_jokers_than_decks_hold(text: str) -> None:
    """Past what a shoe holds (six jokers), where the room for spare wilds runs
    out (a set of one natural card takes ten), the C still answers as the Python."""
    for opts in FREE_OPTIONS[:2]:
        check_hand(parse_cards(text), Rank.KING, opts)
