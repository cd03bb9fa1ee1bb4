"""The state codec: its format version checked on load, the finished rounds' results
kept apart, and an exact JSON round trip."""

from __future__ import annotations

import json
from typing import Any

import pytest

from service.engine import (
    STATE_FORMAT,
    Game,
    Options,
    State,
    errors,
    legal_moves,
    state_from_compact,
    state_to_compact,
)


def _midgame() -> State:
    state = State.new(Game(3, Options(jokers_per_deck=1, false_go_out_penalty=20)), "c3" * 32)
    for _ in range(7):
        rnd = state.round
        assert rnd is not None
        state.apply(rnd.turn, legal_moves(state, rnd.turn)[0])
    return state


@pytest.mark.parametrize("version", [None, 0, 1, 2, STATE_FORMAT + 1, "3", 3.0, [3]])
def test_codec_rejects_unknown_format_version(version: Any) -> None:
    state = _midgame()
    data = state_to_compact(state)
    if version is None:
        del data["v"]
    else:
        data["v"] = version
    with pytest.raises(errors.StateFormatError) as info:
        state_from_compact(data, state.game, state.seed, state.results.json())
    assert info.value.code == "STATE_FORMAT"


def test_codec_keeps_the_results_of_finished_rounds() -> None:
    """The results, stored apart as their JSON text, come back whole."""
    state = State.new(Game(2, Options(max_turns_per_round=4)), "c4" * 32)
    while len(state.results) < 2:  # each round ends after 4 turns
        rnd = state.round
        assert rnd is not None
        state.apply(rnd.turn, legal_moves(state, rnd.turn)[0])
    data = state_to_compact(state)
    results = state.results.json()
    assert len(json.loads(results)) == 2 and "results" not in data
    restored = state_from_compact(data, state.game, state.seed, results)
    assert restored == state and len(restored.results) == len(state.results)
    assert state_to_compact(restored) == data and restored.results.json() == results


def test_codec_round_trip_is_json_and_exact() -> None:
    state = _midgame()
    data = state_to_compact(state)
    assert data["v"] == STATE_FORMAT
    text = json.dumps(data)
    restored = state_from_compact(json.loads(text), state.game, state.seed, state.results.json())
    assert restored == state
    assert state_to_compact(restored) == data
    rnd = restored.round
    assert rnd is not None
    seat = rnd.turn
    assert legal_moves(restored, seat) == legal_moves(state, seat)
