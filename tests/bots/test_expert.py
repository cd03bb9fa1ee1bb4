"""The ``expert`` level: its samples of the hidden cards, its playouts' hand
scores, its seeded determinism, and that it takes a win when one is there."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from service import bots
from service.bots import expert
from service.bots.common import Seen
from service.bots.evaluator import Context, ids
from service.bots.playout import Playout, deal_hidden
from service.bots.quick_hands import QuickHands
from service.bots.simulate import game_seed
from service.bots.strong import Tracker
from service.config import Config
from service.engine.cards import Rank, build_shoe
from service.engine.moves import Discard, Draw, GoOut, Source
from service.engine.options import Aces, Options
from service.engine.rules import Game
from service.engine.state import State
from service.engine.view import observe
from tests.engine.crafted import craft


def _public(events: list[Any]) -> list[dict[str, Any]]:
    return [e.to_dict() for e in events if e.is_public]


def _midgame(players: int, seed: str, moves: int) -> tuple[State, list[dict[str, Any]]]:
    """A game ``moves`` decisions in (``strong`` everywhere), with its public events."""
    state, events = State.start(Game(players), game_seed(seed, players))
    history = _public(events)
    for k in range(moves):
        assert state.round is not None
        seat = state.round.turn
        move = bots.decide("strong", observe(state, seat), random.Random(k), history)
        history += _public(state.apply(seat, move))
    return state, history


@pytest.mark.parametrize("players", [2, 4])
def test_samples_deal_exactly_the_cards_the_seat_has_not_seen(players: int) -> None:
    """Every sample holds the round's shoe exactly once over: the seat's own hand
    as it is, each other hand of its true size with the cards it is known to have
    picked up, the stock of its true size, the discard pile as it lies."""
    for moves in (7, 23, 38):
        state, history = _midgame(players, f"sample:{moves}", moves)
        rnd = state.round
        assert rnd is not None
        seat = rnd.turn
        view = observe(state, seat)
        seen = Seen.of(view)
        tracker = Tracker(seen, history)
        assert tracker.pile == [c.id for c in rnd.discard]
        sizes = [len(h) for h in rnd.hands]
        shoe = Counter(c.id for c in build_shoe(state.game.decks, 0))
        rng = random.Random(3)
        for _ in range(20):
            world = deal_hidden(seen, tracker, sizes, rng)
            assert world.hands[seat] == tuple(sorted(c.id for c in rnd.hands[seat]))
            assert [len(h) for h in world.hands] == sizes
            assert len(world.stock) == len(rnd.stock)
            assert list(world.pile) == [c.id for c in rnd.discard]
            dealt = Counter(c for h in world.hands for c in h)
            dealt.update(world.stock)
            dealt.update(world.pile)
            assert dealt == shoe
            for s, picked in enumerate(tracker.picks):
                if s != seat:
                    assert not Counter(picked) - Counter(world.hands[s]), (s, picked)


def test_a_pick_up_stays_in_the_hand_that_took_it() -> None:
    """A card taken from the discard pile and not thrown back is dealt to its taker
    in every sample."""
    state = craft(2, ["2C 3C 9D JH QS KD 6S", "4C 4D 8H 10S JS QH AD"], discard="4S", turn=1)
    rnd = state.round
    assert rnd is not None
    rnd.stock = [c for c in build_shoe(1, 0) if c not in _held(state)]
    history = [
        {"type": "round_started", "round": 5, "discard_top": "4S"},
        {"type": "drew", "seat": 1, "source": "discard", "card": "4S"},
        {"type": "discarded", "seat": 1, "card": "AD"},
    ]
    state.apply(1, Draw(Source.DISCARD))
    state.apply(1, Discard(next(c for c in rnd.hands[1] if c.code == "AD")))
    seen = Seen.of(observe(state, 0))
    tracker = Tracker(seen, history)
    four = next(c.id for c in build_shoe(1, 0) if c.code == "4S")
    rng = random.Random(0)
    for _ in range(30):
        world = deal_hidden(seen, tracker, [7, 7], rng)
        assert four in world.hands[1]
        assert four not in world.stock


def _held(state: State) -> set[Any]:
    rnd = state.round
    assert rnd is not None
    return {c for h in rnd.hands for c in h} | set(rnd.discard)


@pytest.mark.parametrize(
    "options",
    [Options(), Options(jokers_per_deck=2), Options(aces=Aces.HIGH_OR_LOW, all_wild_melds=True)],
    ids=["classic", "jokers", "aces_high"],
)
def test_quick_hands_agree_with_the_evaluator(options: Options) -> None:
    rng = random.Random(17)
    shoe = build_shoe(2, options.jokers_per_deck)
    for _ in range(200):
        hand = ids(rng.sample(shoe, rng.randint(3, 16)))
        ctx = Context.get(Rank(rng.randint(1, 13)), options)
        quick = QuickHands(ctx)
        assert quick.deadwood(hand) == ctx.deadwood(hand)
        assert sorted(quick.discards(hand)) == sorted(ctx.best_discards(hand))
        assert quick.after_discard(hand) == ctx.after_discard(hand)


def test_the_same_seed_makes_the_same_move_and_the_seed_matters() -> None:
    decisions = 0
    differs = False
    for moves in range(4, 40, 3):
        state, history = _midgame(2, "determinism", moves)
        assert state.round is not None
        view = observe(state, state.round.turn)
        first = bots.decide("expert", view, random.Random(11), history)
        again = bots.decide("expert", observe(state, state.round.turn), random.Random(11), history)
        assert first == again
        assert first.to_dict() in view["legal_moves"]
        decisions += 1
        # a single sample: what it deals is the seed's, and so may be the move
        one = [expert.decide_with(view, random.Random(k), history, 1) for k in range(8)]
        differs = differs or len(set(one)) > 1
    assert decisions > 10
    assert differs, "one sample per decision never changed a move: the samples are not used"


def test_it_goes_out_when_it_can() -> None:
    """Seat 0 holds a run of four and a pair and draws the card that makes the set:
    it goes out, discarding the card left over (0 points, the best there is)."""
    state = craft(
        2,
        ["3H 4H 5H 6H 9C 9D KS", "AS 3D 8S 10C JD QH KC"],
        stock="9S 2D 3S 4S",
        discard="QC",
        turn=0,
    )
    view = observe(state, 0)
    move = bots.decide("expert", view, random.Random(0), [])
    assert move == Draw(Source.STOCK)  # QC fits nothing
    state.apply(0, move)
    view = observe(state, 0)
    assert any(m["type"] == "go_out" for m in view["legal_moves"])
    move = bots.decide("expert", view, random.Random(0), [])
    assert isinstance(move, GoOut)
    assert move.discard.code == "KS"


def test_it_takes_the_discard_that_completes_its_hand() -> None:
    """The top discard completes every meld of the hand: taking it wins the round
    at once, so every playout of it scores best."""
    state = craft(
        2,
        ["3H 4H 5H 6H 9C 9D KS", "AS 3D 8S 10C JD QH KC"],
        stock="3S 4S 5S 8C",
        discard="9S",
        turn=0,
    )
    move = bots.decide("expert", observe(state, 0), random.Random(0), [])
    assert move == Draw(Source.DISCARD)


def test_playouts_score_a_win_below_a_loss() -> None:
    """A going out scores the seat 0 against its opponent's deadwood: the playout
    of the move that completes the hand is worth less (better) than any other."""
    state = craft(
        2,
        ["3H 4H 5H 6H 9C 9D KS", "AS 3D 8S 10C JD QH KC"],
        stock="3S 4S 5S 8C",
        discard="9S",
        turn=0,
    )
    view = observe(state, 0)
    seen = Seen.of(view)
    tracker = Tracker(seen, None)
    world = deal_hidden(seen, tracker, [7, 7], random.Random(1))
    playout = Playout(seen)
    take = playout.play(world, Draw(Source.DISCARD))
    assert take < 0
    assert take < playout.play(world, Draw(Source.STOCK))


def test_the_budget_is_configured_in_samples() -> None:
    assert Config.from_env({}).bot_expert_samples == expert.DEFAULT_SAMPLES
    assert Config.from_env({"BOT_EXPERT_SAMPLES": "8"}).bot_expert_samples == 8
    with pytest.raises(ValueError, match="BOT_EXPERT_SAMPLES"):
        Config.from_env({"BOT_EXPERT_SAMPLES": "0"})
    with pytest.raises(ValueError):
        expert.use_samples(0)
    before = expert.samples()
    try:
        expert.use_samples(3)
        assert expert.samples() == 3
    finally:
        expert.use_samples(before)
