"""The end of a game on a state built directly: totals, shared winners, and a finished
game refusing every move."""

from __future__ import annotations

import pytest

from service.engine import State, Status, errors, legal_moves, observe
from tests.engine.crafted import STOCK, craft, play, rejects, types
from tests.engine.saved import load, save


def _last_round(prior: list[int]) -> State:
    # up_down: the 22nd and last round deals 3 cards with 3s wild
    return craft(
        3,
        ["AC AD AS", "5C 9D KH", "2C 4D 8H"],
        index=21,
        stock="KD",
        opts={"round_order": "up_down", "max_turns_per_round": 1},
        totals=prior,
    )


@pytest.mark.parametrize(
    ("prior", "totals", "winners"),
    [
        ([30, 6, 16], [30, 30, 30], [0, 1, 2]),
        ([31, 6, 16], [31, 30, 30], [1, 2]),
        ([5, 6, 16], [5, 30, 30], [0]),
    ],
)
def test_game_end_and_shared_winners(
    prior: list[int], totals: list[int], winners: list[int]
) -> None:
    state = _last_round(prior)
    assert state.spec.number == 22 and state.spec.hand_size == 3
    play(state, 0, "draw stock")
    events = play(state, 0, "discard KD")
    assert types(events) == ["discarded", "round_ended", "game_finished"]
    assert [h.points for h in state.results[-1].hands] == [0, 24, 14]
    assert state.totals == totals and state.winners == winners
    assert events[-1].data == {"winners": winners, "totals": totals}
    assert state.status is Status.FINISHED and state.round is None
    view = observe(state)
    assert view["status"] == "finished" and view["winners"] == winners
    for seat in range(3):
        assert legal_moves(state, seat) == []
        err = rejects(state, seat, STOCK, errors.GameNotInProgressError)
        assert err.code == "GAME_NOT_IN_PROGRESS"
        rejects(state, seat, "discard KD", errors.GameNotInProgressError)
    # the finished state round-trips, and its event data is not tied to the state
    d = save(state)
    assert save(load(d)) == d
    events[-1].data["totals"].append(99)
    d[0]["totals"].append(99)
    assert state.totals == totals
