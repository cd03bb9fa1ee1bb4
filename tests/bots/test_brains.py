"""Every level only ever returns a legal move; the evaluator agrees with the solver."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service import bots
from service.bots.common import STALEMATE_TURNS_PER_PLAYER
from service.bots.evaluator import Context, ids
from service.bots.simulate import game_seed
from service.engine.cards import Rank, build_shoe
from service.engine.moves import Move
from service.engine.options import Aces, Options
from service.engine.rules import Game
from service.engine.solver import best_arrangement
from service.engine.state import State
from service.engine.view import observe
from tests.engine.crafted import craft

pytestmark = pytest.mark.usefixtures("few_expert_samples")

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"lay_off": True},
    {"jokers_per_deck": 2},
    {"jokers_per_deck": 1, "lay_off": True, "double_face_rounds": True},
    {"false_go_out_penalty": 20},
    {"max_turns_per_round": 6},
    {"max_wilds_per_meld": 1, "unused_wild_points": 15},
    {"aces": "high_or_low", "face_card_points": "rank"},
    {"all_wild_melds": True, "jokers_per_deck": 2, "max_turns_per_round": 12},
    {"extra_rounds": 2, "round_order": "up_down", "max_turns_per_round": 4},
]


def play_checked(
    levels: list[str], options: Options, seed: str, max_decisions: int
) -> tuple[State, int]:
    """Self-play, asserting every decision is one of the view's legal moves."""
    state, events = State.start(Game(len(levels), options), seed)
    history = [e.to_dict() for e in events if e.is_public]
    rng = random.Random(seed)
    decisions = 0
    while state.round is not None and decisions < max_decisions:
        seat = state.round.turn
        view = observe(state, seat)
        move = bots.decide(levels[seat], view, rng, history=history)
        assert isinstance(move, Move)
        assert move.to_dict() in view["legal_moves"], (levels[seat], move, view["legal_moves"])
        history += [e.to_dict() for e in state.apply(seat, move) if e.is_public]
        decisions += 1
    return state, decisions


@pytest.mark.parametrize("overrides", OPTION_SETS, ids=lambda o: ",".join(o) or "classic")
def test_levels_play_legal_moves_under_each_option_set(overrides: dict[str, Any]) -> None:
    options = Options.from_dict(overrides)
    for players in (2, 3, 5):
        levels = [bots.LEVELS[(i + players) % len(bots.LEVELS)] for i in range(players)]
        play_checked(levels, options, game_seed(str(overrides), players), 250)


def test_full_games_finish_for_every_level() -> None:
    for levels in (["strong", "basic"], ["basic", "random", "strong"]):
        state, _ = play_checked(levels, Options(), game_seed("full", len(levels)), 10**6)
        assert state.round is None and state.winners


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    players=st.integers(2, 8),
    option_set=st.sampled_from(OPTION_SETS),
    levels=st.lists(st.sampled_from(bots.LEVELS), min_size=8, max_size=8),
    seed=st.integers(0, 10**9),
)
def test_random_tables_only_ever_see_legal_moves(
    players: int, option_set: dict[str, Any], levels: list[str], seed: int
) -> None:
    play_checked(levels[:players], Options.from_dict(option_set), game_seed(seed, 0), 150)


@pytest.mark.parametrize(
    "options",
    [
        Options(),
        Options(jokers_per_deck=2),
        Options(aces=Aces.HIGH_OR_LOW),
        Options(max_wilds_per_meld=1, unused_wild_points=15),
    ],
    ids=["classic", "jokers", "aces_high", "finnish"],
)
def test_evaluator_agrees_with_the_engine_solver(options: Options) -> None:
    rng = random.Random(13)
    shoe = build_shoe(2, options.jokers_per_deck)
    for _ in range(150):
        hand = rng.sample(shoe, rng.randint(3, 15))
        wild = Rank(rng.randint(1, 13))
        ctx = Context.get(wild, options)
        hand_ids = ids(hand)
        assert ctx.deadwood(hand_ids) == best_arrangement(hand, wild, options).points
        brute = min(
            best_arrangement(hand[:i] + hand[i + 1 :], wild, options).points
            for i in range(len(hand))
        )
        assert ctx.after_discard(hand_ids) == brute


def test_a_stalemate_round_ends() -> None:
    """Round 3 (5 cards, 5s wild; going out takes one meld of five): each hand holds
    four kings that only the other's cards complete.  Greedy play keeps them and
    discards whatever it draws, so the round would never end; past the stalemate
    limit the bots shake it loose (see ``stalemate_discard``)."""
    hands = ["AH 5H 5S KC KD", "AS 5C 5D KH KS"]
    held = {code for hand in hands for code in hand.split()} | {"9C"}
    rest = [c.code for c in build_shoe(1, 0) if c.code not in held]
    state = craft(2, hands, stock=" ".join(rest), discard="9C", index=2)
    limit = STALEMATE_TURNS_PER_PLAYER * 2
    decisions = 0
    while state.round is not None and not len(state.results) and decisions < 40 * limit:
        if state.round.turns_taken == limit:
            assert state.round.went_out is None  # truly stuck until the limit
        seat = state.round.turn
        rng = random.Random(f"stalemate:{decisions}")
        state.apply(seat, bots.decide("basic", observe(state, seat), rng))
        decisions += 1
    assert decisions > 2 * limit
    assert len(state.results) == 1, f"round 3 still going after {decisions} decisions"
    assert state.results.dicts()[0]["ended_by"] == "went_out"


class _AlwaysShake(random.Random):
    """A seeded generator whose ``random()`` always falls inside the shake share."""

    def random(self) -> float:
        return 0.0

    def getrandbits(self, k: int) -> int:  # keeps choice() on the seeded bits
        return super().getrandbits(k)


@pytest.mark.parametrize("level", ["basic", "strong"])
def test_random_discards_only_in_a_stalemate(level: str) -> None:
    hands = ["AH 5H 5S KC KD", "AS 5C 5D KH KS"]
    state = craft(2, hands, stock="9D 2C 3C", discard="9C", index=2)
    state.apply(0, Move.parse("draw stock"))
    before = {bots.decide(level, observe(state, 0), _AlwaysShake(k)) for k in range(20)}
    assert len(before) == 1  # an ordinary round: the level's own choice, whatever the rng
    assert state.round is not None
    state.round.turns_taken = STALEMATE_TURNS_PER_PLAYER * 2
    view = observe(state, 0)
    shaken = {bots.decide(level, view, _AlwaysShake(k)) for k in range(20)}
    assert len(shaken) > 1
    assert {m.to_dict()["card"] for m in shaken} <= {"AH", "9D", "KC", "KD"}  # never a wild
    state.round.went_out = 1  # a final turn is never shaken
    assert {bots.decide(level, observe(state, 0), _AlwaysShake(k)) for k in range(5)} == before


def test_expert_shakes_a_stalemate_loose_too() -> None:
    """The expert's ordinary discards depend on its samples (its rng), so only the
    stalemate's random discards are checked: several cards, never a wild."""
    hands = ["AH 5H 5S KC KD", "AS 5C 5D KH KS"]
    state = craft(2, hands, stock="9D 2C 3C", discard="9C", index=2)
    state.apply(0, Move.parse("draw stock"))
    assert state.round is not None
    state.round.turns_taken = STALEMATE_TURNS_PER_PLAYER * 2
    view = observe(state, 0)
    shaken = {bots.decide("expert", view, _AlwaysShake(k)) for k in range(20)}
    assert len(shaken) > 1
    assert {m.to_dict()["card"] for m in shaken} <= {"AH", "9D", "KC", "KD"}
