"""A bot decides only from its own seat's view (and public events).

The decisive check: two states that differ only in what the seat cannot see
(the other hands and the order of the stock) give the same view and the same
decision, for every level, with and without history.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from service import bots
from service.bots.simulate import game_seed
from service.engine.game_events import Event
from service.engine.options import Options
from service.engine.rules import Game
from service.engine.state import State
from service.engine.view import observe
from tests.engine.saved import copy_of

pytestmark = pytest.mark.usefixtures("few_expert_samples")


def _public(events: list[Event]) -> list[dict[str, Any]]:
    return [e.to_dict() for e in events if e.is_public]


def _scramble_hidden(state: State, seat: int, rng: random.Random) -> State:
    """A copy of ``state`` with the other hands and the stock dealt anew from
    the same cards (same sizes): everything ``seat`` cannot see changes."""
    other = copy_of(state)  # the engine's own copy
    rnd = other.round
    assert rnd is not None
    seats = [s for s in range(len(rnd.hands)) if s != seat]
    pool = [c for s in seats for c in rnd.hands[s]] + list(rnd.stock)
    rng.shuffle(pool)
    for s in seats:
        size = len(rnd.hands[s])
        rnd.hands[s], pool = sorted(pool[:size]), pool[size:]
    rnd.stock = pool
    return other


@pytest.mark.parametrize("overrides", [{}, {"jokers_per_deck": 1, "lay_off": True}])
def test_hidden_cards_do_not_change_any_decision(overrides: dict[str, Any]) -> None:
    options = Options.from_dict(overrides)
    levels = ["strong", "basic", "random"]
    state, events = State.start(Game(3, options), game_seed("hidden", len(overrides)))
    history = _public(events)
    scramble_rng = random.Random(5)
    checked = 0
    while state.round is not None and checked < 300:
        seat = state.round.turn
        twin = _scramble_hidden(state, seat, scramble_rng)
        assert twin.round is not None and state.round is not None
        view = observe(state, seat)
        assert observe(twin, seat) == view
        if state.round.hands != twin.round.hands or state.round.stock != twin.round.stock:
            checked += 1
        for level in bots.LEVELS:
            for hist in (None, history):
                a = bots.decide(level, observe(state, seat), random.Random(1), history=hist)
                b = bots.decide(level, observe(twin, seat), random.Random(1), history=hist)
                assert a == b, (level, a, b)
        move = bots.decide(levels[seat], view, random.Random(checked), history=history)
        history += _public(state.apply(seat, move))
    assert checked > 50


def test_the_view_is_plain_data_and_hides_other_hands() -> None:
    """A brain gets a JSON-able dict: no object that could lead back to the state,
    and no card of another hand or of the stock."""
    state = State.new(Game(4), game_seed("plain", 0))
    assert state.round is not None
    seat = state.round.turn
    view = observe(state, seat)
    assert json.loads(json.dumps(view)) == view
    assert all(set(p) == {"seat", "hand_size", "total"} for p in view["players"])
    assert set(view["round"]).isdisjoint({"hands", "stock"})
    assert view["hand"] == [c.code for c in state.round.hands[seat]]


class _Recording(dict[str, Any]):
    """A view that records which keys a brain reads."""

    def __init__(self, data: dict[str, Any], log: set[str]) -> None:
        super().__init__(data)
        self.log = log

    def __getitem__(self, key: str) -> Any:
        self.log.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.log.add(key)
        return super().get(key, default)


def test_brains_read_only_the_views_keys() -> None:
    state = State.new(Game(3), game_seed("keys", 0))
    assert state.round is not None
    for level in bots.LEVELS:
        seat = state.round.turn
        log: set[str] = set()
        view = observe(state, seat)
        bots.decide(level, _Recording(view, log), random.Random(0))
        assert log <= set(view), (level, log - set(view))


def test_private_events_of_other_seats_are_ignored() -> None:
    """Whatever a caller mixes into ``history``, another seat's private event
    (e.g. the card it drew from the stock) changes nothing."""
    state, events = State.start(Game(2), game_seed("private", 0))
    history = _public(events)
    for _ in range(40):
        assert state.round is not None
        seat = state.round.turn
        move = bots.decide("basic", observe(state, seat), random.Random(0))
        new = state.apply(seat, move)
        history += _public(new)
    assert state.round is not None
    seat = state.round.turn
    leaked = history + [
        {"type": "drew", "seat": 1 - seat, "source": "discard", "card": "KS", "private": True},
        {"type": "dealt", "seat": 1 - seat, "hand": ["KS", "KD"], "private": True},
    ]
    view = observe(state, seat)
    assert bots.decide("strong", view, random.Random(0), history=history) == bots.decide(
        "strong", view, random.Random(0), history=leaked
    )
