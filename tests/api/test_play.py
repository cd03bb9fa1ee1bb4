"""Whole games over HTTP, checked move by move against the engine itself."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from service.engine.moves import Move
from service.engine.options import Options, preset
from service.engine.rules import Game
from service.engine.shuffle import seed_from_client
from service.engine.solver import clear_memos, switch
from service.engine.state import State
from service.engine.view import observe
from tests.api.conftest import create_game, make_app


def choose(view: dict[str, Any]) -> dict[str, Any]:
    """A simple deterministic policy: go out when possible, else draw the stock
    and discard the costliest deadwood card."""
    moves = view["legal_moves"]
    for move in moves:
        if move["type"] == "go_out":
            return move
    if view["round"]["phase"] == "draw":
        return next(m for m in moves if m["type"] == "draw")
    deadwood = view["arrangement"]["deadwood"]
    discards = [m for m in moves if m["type"] == "discard"]
    for move in discards:
        if deadwood and move["card"] == deadwood[-1]:
            return move
    return discards[-1]


CASES = [
    (2, "classic", {}),
    (3, "classic", {"aces": "high_or_low", "face_card_points": "rank"}),
    (4, "finnish", {"max_turns_per_round": 40}),
    (3, "party", {"false_go_out_penalty": 20, "max_turns_per_round": 60}),
    (2, "classic", {"extra_rounds": 2, "round_order": "up_down", "max_turns_per_round": 30}),
]


@pytest.mark.parametrize(("players", "ruleset", "options"), CASES)
def test_whole_game_matches_engine(client, players, ruleset, options):
    seed = f"game-{players}-{ruleset}-{len(options)}"
    game = create_game(
        client,
        [{"name": f"p{i}"} for i in range(players)],
        ruleset=ruleset,
        options=options,
        seed=seed,
    )
    engine = State.new(
        Game(players, Options.from_dict(options, base=preset(ruleset))), seed_from_client(seed)
    )
    version = game.public()["version"]
    for _ in range(5000):
        public = game.public()
        if public["status"] == "finished":
            break
        seat = public["round"]["turn"]
        view = game.view(seat)
        assert view["hand"] == observe(engine, seat)["hand"]
        move = choose(view)
        response = game.move(seat, move, **{"If-Match": f'"{version}"'})
        assert response.status_code == 200, response.get_json()
        assert response.headers["ETag"].startswith(f'"{version + 1}.')
        version += 1
        engine.apply(seat, Move.from_dict(move))
    public = game.public()
    assert public["status"] == "finished"
    assert engine.round is None
    assert [p["total"] for p in public["players"]] == engine.totals
    assert public["results"] == [r.to_dict() for r in engine.results]
    assert public["winners"] == engine.winners
    assert len(public["results"]) == len(engine.game.rounds)
    assert public["fairness"]["seed"] == seed_from_client(seed)


def play_recorded(app: Flask, seed: str, moves: int) -> list[Any]:
    """Every view and move answer of ``moves`` moves of a seeded 3-player game."""
    clear_memos()  # what one solver found must not answer for the other
    client = app.test_client()
    game = create_game(client, [{"name": f"p{i}"} for i in range(3)], seed=seed)
    seen: list[Any] = []
    for _ in range(moves):
        public = game.public()
        if public["status"] == "finished":
            break
        seat = public["round"]["turn"]
        view = game.view(seat)
        seen.append({k: v for k, v in view.items() if k != "id"})  # each game its own id
        response = game.move(seat, choose(view))
        assert response.status_code == 200, response.get_json()
        seen.append(response.status_code)
    return seen


def test_the_c_solver_and_the_python_answer_the_same(redis_url):
    """SOLVER=c and SOLVER=python: the same views (arrangements, legal moves) move for move."""
    try:
        python = play_recorded(make_app(redis_url, SOLVER="python"), "solvers", 400)
        assert switch.c_search(13) is None  # the app turned the C off
        with_c = play_recorded(make_app(redis_url, SOLVER="c"), "solvers", 400)
        assert (switch.c_search(13) is None) == (switch.EXTENSION is None)
    finally:
        switch.use_c(True)
    assert len(python) == len(with_c) > 200
    for step, (a, b) in enumerate(zip(python, with_c, strict=True)):
        assert a == b, f"step {step} differs"
