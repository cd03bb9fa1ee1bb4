"""The simulator's command line, and a short strength sanity check."""

from __future__ import annotations

import math
import statistics

import pytest

from service.bots import simulate
from service.engine.options import Options


def test_simulator_main_runs_a_tiny_config(capsys: pytest.CaptureFixture[str]) -> None:
    code = simulate.main(
        [
            "--players", "strong,basic,random",
            "--games", "2",
            "--seed", "tiny",
            "--option", "max_turns_per_round=6",
            "--option", "lay_off=true",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "| strong | 1 | 2 |" in out and "| random |" in out and "time:" in out


def test_simulator_rejects_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert simulate.main(["--players", "strong,grandmaster", "--games", "1"]) == 2
    assert simulate.main(["--players", "basic", "--games", "1"]) == 2  # one player
    assert simulate.main(["--players", "basic,basic", "--option", "aces=sideways"]) == 2
    assert "grandmaster" in capsys.readouterr().err


def test_summary_statistics_are_taken_per_deal() -> None:
    outcomes = [
        simulate.SimulatedGame(("a", "b"), [10, 20], [0], deal=0),
        simulate.SimulatedGame(("b", "a"), [30, 20], [1], deal=0),
        simulate.SimulatedGame(("a", "b"), [6, 40], [0], deal=1),
        simulate.SimulatedGame(("b", "a"), [50, 4], [1], deal=1),
    ]
    rows = {r.level: r for r in simulate.summarize(outcomes)}
    # a: deal 0 -> (10 + 20) / 2 = 15, deal 1 -> (6 + 4) / 2 = 5
    assert rows["a"].mean == 10 and rows["a"].wins == 4 and rows["b"].wins == 0
    assert (rows["a"].games, rows["a"].deals) == (4, 2)
    # b: deal 0 -> 25, deal 1 -> 45; the interval comes from the spread of deals
    assert rows["b"].mean == 35
    assert rows["b"].ci95 == pytest.approx(1.96 * statistics.stdev([25, 45]) / math.sqrt(2))
    mean, ci = simulate.paired_difference(outcomes, "b", "a")
    assert mean == 25 and ci == pytest.approx(1.96 * statistics.stdev([10, 40]) / math.sqrt(2))


def test_games_of_a_deal_share_the_seed_and_rotate_the_seats() -> None:
    options = Options(max_turns_per_round=4)
    outcomes = list(simulate.run_games(("strong", "basic", "random"), options, 6, "dup"))
    assert [o.deal for o in outcomes] == [0, 0, 0, 1, 1, 1]
    assert {o.levels for o in outcomes[:3]} == {
        ("strong", "basic", "random"),
        ("basic", "random", "strong"),
        ("random", "strong", "basic"),
    }


def test_basic_beats_random_over_short_games() -> None:
    """Not timing-based: seeded full games, basic's totals far below random's."""
    outcomes = list(simulate.run_games(("basic", "random"), Options(), 12, "sanity"))
    rows = {r.level: r for r in simulate.summarize(outcomes)}
    assert rows["basic"].wins >= 11
    assert rows["basic"].mean + rows["basic"].ci95 < rows["random"].mean - rows["random"].ci95


def test_strong_is_not_worse_than_basic() -> None:
    options = Options(max_turns_per_round=30)
    outcomes = list(simulate.run_games(("strong", "basic"), options, 10, "sanity"))
    rows = {r.level: r for r in simulate.summarize(outcomes)}
    assert rows["strong"].mean <= rows["basic"].mean
