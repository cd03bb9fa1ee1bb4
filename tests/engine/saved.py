"""A state saved whole for tests: the engine's stored form plus what its owner
(a game record) stores beside it -- the rules, the seed and the results' text.
Two saved states are equal when everything that makes their states is."""

from __future__ import annotations

from typing import Any

from service.engine import Game, State, state_from_compact, state_to_compact

Saved = tuple[dict[str, Any], Game, str, bytes]


def save(state: State) -> Saved:
    """A snapshot of ``state``: later moves do not change it."""
    return state_to_compact(state), state.game, state.seed, state.results.json()


def load(saved: Saved) -> State:
    """A new state, equal to the one :func:`save` saw."""
    return state_from_compact(*saved)


def copy_of(state: State) -> State:
    """An independent copy of ``state`` (through the engine's own codec)."""
    return load(save(state))
