"""States built directly for targeted rule tests: a round dealt from given hands and
stock, a move played from its text, a move refused leaving the state as it was."""

from __future__ import annotations

from typing import Any

import pytest

from service.engine import Card, Draw, Event, Game, Move, Options, Round, Source, State, parse_cards
from tests.engine.saved import save

SEED = "5a" * 32
STOCK = Draw(Source.STOCK)
FROM_DISCARD = Draw(Source.DISCARD)


def cards(text: str) -> list[Card]:
    return parse_cards(text)


def craft(
    n: int,
    hands: list[str],
    *,
    stock: str = "",
    discard: str = "KC",
    index: int = 4,
    turn: int = 0,
    opts: dict[str, Any] | None = None,
    totals: list[int] | None = None,
) -> State:
    """A state in round ``index + 1`` (default: round 5, 7 cards, 7s wild).

    ``stock`` lists the stock with its top card first (the engine keeps it last).
    """
    game = Game(n, Options.from_dict(opts or {}))
    state = State(game, SEED, list(totals or [0] * n))
    state.round = Round(
        index=index,
        dealer=(turn - 1) % n,
        turn=turn,
        stock=cards(stock)[::-1],
        discard=cards(discard),
        hands=[sorted(cards(h)) for h in hands],
        penalties=[0] * n,
    )
    return state


def play(state: State, seat: int, text: str) -> list[Event]:
    return state.apply(seat, Move.parse(text))


def rejects(state: State, seat: int, move: Move | str, exc: type[Exception]) -> Exception:
    """``move`` raises ``exc`` and leaves the state exactly as it was."""
    if isinstance(move, str):
        move = Move.parse(move)
    before = save(state)
    with pytest.raises(exc) as info:
        state.apply(seat, move)
    assert save(state) == before
    return info.value


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def codes(cs: Any) -> list[str]:
    return [c.code for c in cs]


HAND0 = "4H 5H 6H 9C 9D 9S 7S"  # round 5: 7S is wild; goes out after drawing KD
