"""A game played over real HTTP, one move at a time, for tests and benchmarks.

game = LiveGame.create(base_url, players=2)
while game.step():   # the seat whose turn it is plays one move
    ...
"""

from __future__ import annotations

from typing import Any

import requests


def choose(view: dict[str, Any]) -> dict[str, Any]:
    """Go out if possible, else draw from the stock, else discard the last deadwood card."""
    moves = view["legal_moves"]
    for kind in ("go_out", "draw"):
        for move in moves:
            if move["type"] == kind and move.get("source", "stock") == "stock":
                return move
    discards = [m for m in moves if m["type"] == "discard"]
    deadwood = view["arrangement"]["deadwood"]
    for move in discards:
        if deadwood and move["card"] == deadwood[-1]:
            return move
    return discards[-1]


class LiveGame:
    """A game of human seats whose tokens this client holds."""

    def __init__(self, base: str, game_id: str, tokens: dict[int, str], session: Any) -> None:
        self.base = base
        self.id = game_id
        self.tokens = tokens
        self.session = session
        self._view: dict[str, Any] | None = None

    @classmethod
    def create(
        cls,
        base: str,
        players: int = 2,
        session: Any = None,
        **body: Any,
    ) -> LiveGame:
        session = session or requests.Session()
        created = session.post(
            f"{base}/v1/games",
            json={"players": [{"name": f"p{i}"} for i in range(players)], **body},
            timeout=10,
        )
        assert created.status_code == 201, created.text
        out = created.json()
        tokens = {p["seat"]: p["token"] for p in out["players"]}
        return cls(base, out["id"], tokens, session)

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    def url(self, path: str = "") -> str:
        return f"{self.base}/v1/games/{self.id}{path}"

    def public(self) -> dict[str, Any]:
        response = self.session.get(self.url(), timeout=10)
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]

    def step(self) -> bool:
        """The seat whose turn it is plays one move; False once the game is over."""
        view = self._view
        if view is None:
            public = self.public()
            if public["status"] != "playing":
                return False
            seat = public["round"]["turn"]
            response = self.session.get(self.url("/view"), headers=self.auth(seat), timeout=10)
            assert response.status_code == 200, response.text
            view = response.json()
        seat = view["seat"]
        response = self.session.post(
            self.url("/moves"), json=choose(view), headers=self.auth(seat), timeout=10
        )
        assert response.status_code == 200, response.text
        view = response.json()
        mine = view["status"] == "playing" and (view.get("round") or {}).get("turn") == seat
        self._view = view if mine else None
        return True

    def events(self, seat: int | None = None) -> list[dict[str, Any]]:
        """Every event ``seat`` (None: a spectator) may see, read page by page."""
        out: list[dict[str, Any]] = []
        after = 0
        headers = {} if seat is None else self.auth(seat)
        while True:
            response = self.session.get(
                self.url("/events"), params={"after": after}, headers=headers, timeout=10
            )
            assert response.status_code == 200, response.text
            page = response.json()
            out += page["events"]
            if page["last_seq"] <= after:
                return out
            after = page["last_seq"]
