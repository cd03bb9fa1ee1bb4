"""API test helpers: the app on a Redis (``make_app``; the ``app`` and ``client``
fixtures in tests/conftest.py use it), and a small client helper."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Config
from service.store import GameStore, connect


def make_app(redis_url: str | None, **overrides: str) -> Flask:
    """The app on ``redis_url`` (None: the embedded store), seeded games allowed, and
    rate limits, the lobby's limits per address and the pace of games of bots alone
    off (a test is one address; it waits for its bots) unless ``overrides`` say
    otherwise."""
    env = {
        "ALLOW_SEEDED_GAMES": "true",
        "BOT_IDLE_MOVE_SECONDS": "0",
        "RATE_LIMITS": "false",
        "LOBBY_SEATS_PER_ADDRESS": "0",
        "LOBBY_LISTED_PER_ADDRESS": "0",
        **overrides,
    }
    if redis_url is not None:
        env["REDIS_URL"] = redis_url
    config = Config.from_env(env)
    app = create_app(config, GameStore(connect(config), config=config))
    app.testing = True
    return app


@dataclass
class Game:
    """A game created through the API, with its seats' tokens."""

    client: FlaskClient
    id: str
    tokens: dict[int, str] = field(default_factory=dict)

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    def public(self) -> dict[str, Any]:
        response = self.client.get(f"/v1/games/{self.id}")
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def view(self, seat: int) -> dict[str, Any]:
        response = self.client.get(f"/v1/games/{self.id}/view", headers=self.auth(seat))
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def move(self, seat: int, move: dict[str, Any], **headers: str) -> Any:
        return self.client.post(
            f"/v1/games/{self.id}/moves", json=move, headers={**self.auth(seat), **headers}
        )

    def settled(self, timeout: float = 60) -> dict[str, Any]:
        """The public view once no bot is left to play (a human's turn, or the game
        over), polled while the bot worker plays them."""
        return until(lambda: _settled(self.public()), timeout)

    def turn_of(self, seat: int, timeout: float = 60) -> dict[str, Any]:
        """``seat``'s view once it is its turn (or the game no longer in play),
        polled while the bot worker plays the others' turns."""

        def mine() -> dict[str, Any] | None:
            view = self.view(seat)
            if view["status"] != "playing" or (view["round"] or {}).get("turn") == seat:
                return view
            return None

        return until(mine, timeout)

    def events(self, seat: int | None = None, after: int = 0) -> list[dict[str, Any]]:
        headers = self.auth(seat) if seat is not None else {}
        response = self.client.get(f"/v1/games/{self.id}/events?after={after}", headers=headers)
        assert response.status_code == 200
        return response.get_json()["events"]


def until(found: Any, timeout: float = 60, pause: float = 0.02) -> Any:
    """``found()``'s first answer other than None (or False), asked again every
    ``pause`` seconds for at most ``timeout`` seconds (then the test fails)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = found()
        if answer is not None and answer is not False:
            return answer
        assert time.monotonic() < deadline, f"not so after {timeout} s"
        time.sleep(pause)


def bot_to_play(public: dict[str, Any]) -> bool:
    """Whether a bot (or a seat on autopilot) is to play in a public view."""
    turn = (public.get("round") or {}).get("turn")
    return (
        public["status"] == "playing"
        and turn is not None
        and public["players"][turn].get("bot") is not None
    )


def _settled(public: dict[str, Any]) -> dict[str, Any] | None:
    return None if bot_to_play(public) else public


def create_game(client: FlaskClient, players: list[dict[str, Any]], **body: Any) -> Game:
    response = client.post("/v1/games", json={"players": players, **body})
    assert response.status_code == 201, response.get_json()
    data = response.get_json()
    game = Game(client, data["id"])
    for player in data["players"]:
        if "token" in player:
            game.tokens[player["seat"]] = player["token"]
    return game


@pytest.fixture
def new_game(client: FlaskClient) -> Iterator[Any]:
    def make(n: int = 2, **body: Any) -> Game:
        return create_game(client, [{"name": f"p{i}"} for i in range(n)], **body)

    yield make


def store_reads(monkeypatch: pytest.MonkeyPatch, method: str) -> list[str]:
    """The game ids ``GameStore.<method>`` is called with from now on (the test's
    monkeypatch undoes the wrapping)."""
    seen: list[str] = []
    original = getattr(GameStore, method)

    def counting(self: GameStore, game_id: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(game_id)
        return original(self, game_id, *args, **kwargs)

    monkeypatch.setattr(GameStore, method, counting)
    return seen


def play_one(game: Game, seat: int, view: dict[str, Any]) -> None:
    """``seat`` plays greedily from its ``view``: it goes out when the view lists
    it, else draws from the stock, else discards the costliest card of its deadwood."""
    moves = view["legal_moves"]
    go_out = [m for m in moves if m["type"] == "go_out"]
    discards = {m["card"]: m for m in moves if m["type"] == "discard"}
    deadwood = [c for c in view["arrangement"]["deadwood"] if c in discards]
    if go_out:
        move = go_out[0]
    elif deadwood:
        move = discards[deadwood[-1]]
    else:
        move = moves[0]
    assert game.move(seat, move).status_code == 200


def play_on(game: Game, moves: int) -> None:
    """Play ``moves`` more moves, each by the seat whose turn it is (:func:`play_one`)."""
    for _move in range(moves):
        turn = game.settled()["round"]["turn"]  # the bot worker plays the bots' turns
        play_one(game, turn, game.view(turn))
    game.settled()
