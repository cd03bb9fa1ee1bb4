"""Seeded self-play: whole games for 2..8 players across option combinations,
with the engine's invariants checked after every action.

The policy picks random legal moves with a bias towards going out (and a
greedy discard most of the time, so rounds end); under
``false_go_out_penalty`` it sometimes claims an invalid go-out.  After every
action: no card is created or lost, hand sizes are right, scores are never
negative, the state round-trips exactly through the codec and a restored
state behaves identically, sampled legal moves are accepted (on copies) and
sampled illegal moves raise :class:`IllegalMoveError` leaving the state
unchanged.  At the end: the number of rounds, the winners, and a replay of
the same seed and moves giving the same events and totals.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from service.engine import (
    OPTION_SPECS,
    Discard,
    Draw,
    Event,
    Game,
    GoOut,
    Move,
    Options,
    Phase,
    Source,
    State,
    errors,
    legal_moves,
    observe,
)
from tests.engine.option_values import GOOD_VALUES
from tests.engine.saved import load, save
from tests.engine.selfplay_checks import (
    check_invariants,
    check_round_result,
    clone,
    illegal_samples,
)
from tests.engine.selfplay_policy import choose

# (players, options, seed number).  Full schedules first, then shortened ones.
HAND_PICKED: list[tuple[int, dict[str, Any]]] = [
    (2, {}),
    (3, {"aces": "high_or_low", "face_card_points": "rank"}),
    (4, {"jokers_per_deck": 2, "lay_off": True, "double_face_rounds": True}),
    (2, {"max_wilds_per_meld": 1, "unused_wild_points": 15}),
    (3, {"extra_rounds": 2, "false_go_out_penalty": 20}),
    (2, {"round_order": "up_down", "max_turns_per_round": 12}),
    (2, {"round_order": "up_down", "extra_rounds": 2, "max_turns_per_round": 8}),
    (5, {"false_go_out_penalty": 20, "lay_off": True, "max_turns_per_round": 30}),
    (8, {"all_wild_melds": True, "jokers_per_deck": 1, "max_turns_per_round": 24}),
    (6, {"decks": 4, "extra_rounds": 1, "max_turns_per_round": 18}),
    (7, {"lay_off": True, "jokers_per_deck": 1, "max_wilds_per_meld": 1}),
    (3, {"lay_off": True, "aces": "high_or_low", "all_wild_melds": True, "extra_rounds": 2}),
    (4, {"max_turns_per_round": 1}),
    (2, {"decks": 3, "jokers_per_deck": 2, "max_turns_per_round": 10}),
    (8, {"extra_rounds": 2, "max_turns_per_round": 16}),
    (4, {"round_order": "up_down", "double_face_rounds": True, "max_turns_per_round": 8}),
]

# Every rule option with each of its values, except the table-size ones (decks,
# max_turns_per_round), which the hand-picked games cover.
_CHOICES: dict[str, list[Any]] = {
    name: values
    for name, values in GOOD_VALUES.items()
    if name not in ("decks", "max_turns_per_round")
}


def _random_combos(count: int) -> list[tuple[int, dict[str, Any]]]:
    rng = random.Random(3013)
    combos = []
    for i in range(count):
        n = 2 + i % 7
        opts = {name: rng.choice(values) for name, values in _CHOICES.items()}
        game = Game(n, Options.from_dict(opts))
        if rng.random() < 0.3:
            opts["decks"] = game.decks + rng.randint(1, 2)
        opts["max_turns_per_round"] = rng.choice([1, n, 2 * n, 3 * n])
        combos.append((n, opts))
    return combos


COMBOS = HAND_PICKED + _random_combos(20)


def test_every_option_is_covered() -> None:
    seen: dict[str, set[Any]] = {name: set() for name in OPTION_SPECS}
    for n, opts in COMBOS:
        game = Game(n, Options.from_dict(opts))
        for name, value in game.options.to_dict().items():
            seen[name].add(value)
        if opts.get("decks") is not None:
            assert game.decks > Game(n, Options.from_dict({**opts, "decks": None})).decks
            seen["decks"].add("larger")
    for name, values in _CHOICES.items():
        assert set(values) <= seen[name], name
    assert "larger" in seen["decks"]
    assert any(v is not None for v in seen["max_turns_per_round"])
    assert {n for n, _ in COMBOS} == set(range(2, 9))


# -- playing a game ----------------------------------------------------------------


def _events(events: list[Event]) -> list[tuple[str, dict[str, Any], int | None]]:
    return [(e.type, e.to_dict(), e.seat) for e in events]


@dataclass
class Played:
    moves: list[tuple[int, Move]] = field(default_factory=list)
    events: list[tuple[str, dict[str, Any], int | None]] = field(default_factory=list)


def _play(
    n: int, opts: dict[str, Any], seed: str, rng: random.Random, stubborn: bool = False
) -> tuple[State, Played]:
    game = Game(n, Options.from_dict(opts))
    state, start_events = State.start(game, seed)
    played = Played(events=_events(start_events))
    assert state.round is not None
    assert state.round.dealer == State.new(game, seed).round.dealer  # type: ignore[union-attr]
    dealer = state.round.dealer
    round_index = 0
    check_invariants(state)
    after = save(state)
    while state.round is not None:
        rnd = state.round
        seat = rnd.turn
        before = after
        # the codec round-trips exactly
        restored = load(before)
        assert save(restored) == before
        # sampled legal moves are accepted (on copies)
        legal = legal_moves(state, seat)
        for m in rng.sample(legal, min(2, len(legal))):
            copy = clone(state)
            copy.apply(seat, m)
            check_invariants(copy)
        # sampled illegal moves raise and change nothing
        for who, m, exc in illegal_samples(state, legal, rng):
            assert m not in (legal if who == seat else legal_moves(state, who))
            with pytest.raises(exc):
                state.apply(who, m)
        assert state == restored  # unchanged (dataclass equality: every field, every card)
        move = choose(state, rng, stubborn)
        events = state.apply(seat, move)
        # the restored state behaves identically
        assert _events(restored.apply(seat, move)) == _events(events)
        assert restored == state
        after = save(state)
        played.moves.append((seat, move))
        played.events += _events(events)
        if any(e.type == "go_out_refused" for e in events):
            assert isinstance(move, GoOut)
            assert state.round is rnd and rnd.claim_refused and rnd.phase is Phase.DISCARD
            penalty = game.options.false_go_out_penalty
            assert rnd.penalties[seat] == before[0]["round"]["penalties"][seat] + penalty
            with pytest.raises(errors.GoOutForbiddenError):
                state.apply(seat, move)
            assert all(isinstance(m, Discard) for m in legal_moves(state, seat))
        check_round_result(state, before, events)
        if len(played.moves) % 7 == 0:
            public = observe(state)
            assert "hand" not in public and (state.round is None or "stock" not in public["round"])
        if any(e.type == "round_ended" for e in events):
            round_index += 1
            if state.round is not None:
                assert state.round.index == round_index
                assert state.round.dealer == (dealer + round_index) % n
                assert state.round.turn == (state.round.dealer + 1) % n
                assert state.round.phase is Phase.DRAW
        check_invariants(state)
    return state, played


SEEDS = [f"{i:02x}" * 32 for i in range(len(COMBOS))]


@pytest.mark.parametrize(
    ("n", "opts", "seed"),
    [(n, opts, seed) for (n, opts), seed in zip(COMBOS, SEEDS, strict=True)],
    ids=[f"{i}-p{n}" for i, (n, _) in enumerate(COMBOS)],
)
def test_selfplay(n: int, opts: dict[str, Any], seed: str) -> None:
    rng = random.Random(seed)
    state, played = _play(n, opts, seed, rng)
    game = state.game
    expected_rounds = (11 + game.options.extra_rounds) * (
        2 if game.options.round_order.value == "up_down" else 1
    )
    assert len(game.rounds) == expected_rounds
    assert len(state.results) == expected_rounds
    assert [r.number for r in state.results] == list(range(1, expected_rounds + 1))
    assert [r.wild_rank for r in state.results] == [s.wild_rank for s in game.rounds]
    for seat in range(n):
        assert state.totals[seat] == sum(r.hands[seat].points for r in state.results)
    best = min(state.totals)
    assert state.winners == [s for s in range(n) if state.totals[s] == best]
    assert played.events[-1][0] == "game_finished"
    assert played.events[-1][1]["winners"] == state.winners
    # a finished game accepts nothing
    for seat in range(n):
        assert legal_moves(state, seat) == []
        with pytest.raises(errors.GameNotInProgressError):
            state.apply(seat, Draw(Source.STOCK))
    d = save(state)
    assert save(load(d)) == d
    # determinism: the same seed and moves replay the same game
    replay, events = State.start(Game(n, Options.from_dict(opts)), seed)
    replay_events = _events(events)
    for seat, move in played.moves:
        replay_events += _events(replay.apply(seat, move))
    assert replay_events == played.events
    assert replay.totals == state.totals and replay.winners == state.winners
    assert save(replay) == d


@pytest.mark.parametrize(
    "opts",
    [
        {"max_turns_per_round": 70},
        {"jokers_per_deck": 2, "aces": "high_or_low", "max_turns_per_round": 70},
    ],
)
def test_selfplay_stock_runs_out(opts: dict[str, Any]) -> None:
    """Two players who always draw from the stock and never go out: every round
    reshuffles the discards into a new stock, and nothing is lost."""
    seed = "e7" * 32
    state, played = _play(2, opts, seed, random.Random(seed), stubborn=True)
    reshuffles = [e for e in played.events if e[0] == "stock_reshuffled"]
    assert len(reshuffles) >= len(state.game.rounds)
    assert all(r.ended_by == "turn_limit" for r in state.results)
    replay, events = State.start(Game(2, Options.from_dict(opts)), seed)
    replay_events = _events(events)
    for seat, move in played.moves:
        replay_events += _events(replay.apply(seat, move))
    assert replay_events == played.events


@pytest.mark.parametrize(("n", "seed"), [(6, f"{0x504:064x}"), (4, f"{0x51B:064x}")])
def test_selfplay_jokers_laid_off_onto_laid_off_jokers(n: int, seed: str) -> None:
    """Lay-offs with jokers and at most one wild a meld: in these games a lay-down
    puts a joker on a meld already holding laid-off jokers (it used to fail an
    assert, a 500 through the API)."""
    opts = {"jokers_per_deck": 2, "lay_off": True, "max_wilds_per_meld": 1}
    state, played = _play(n, opts, seed, random.Random(seed))
    assert state.round is None and len(state.results) == len(state.game.rounds)
    laid_jokers = [c for r in state.results for h in r.hands for lo in h.layoffs for c in lo.cards]
    assert any(c.is_joker for c in laid_jokers) and played.moves


def test_different_seeds_deal_differently() -> None:
    a = State.new(Game(4), "01" * 32)
    b = State.new(Game(4), "02" * 32)
    assert a.round is not None and b.round is not None
    assert (a.round.hands, a.round.stock) != (b.round.hands, b.round.stock)
