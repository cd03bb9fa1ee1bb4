"""The simulator's command line, and a short strength sanity check."""

from __future__ import annotations

import pytest

from service.bots import simulate
from service.engine.rules import Options


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


def test_summary_statistics() -> None:
    outcomes = [
        simulate.Outcome(("a", "b"), [10, 20], [0]),
        simulate.Outcome(("b", "a"), [30, 20], [1]),
    ]
    rows = {r.level: r for r in simulate.summarize(outcomes)}
    assert rows["a"].mean == 15 and rows["a"].wins == 2 and rows["b"].wins == 0
    assert rows["b"].mean == 25 and rows["b"].ci95 > 0


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
