"""The app's story over HTTP, for the lifecycle webhook tests: its players' moves sent
from their devices to both instances, a player JWT the app signs with a key the
operator registers, a revocation watched on both instances, and another app's
credentials refused on the game."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from harness.live_game import choose
from service.hosting.apps import CACHE_SECONDS
from tests.apps.test_two_instances import admin


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def call(method: str, url: str, token: str, status: int, **kwargs: Any) -> Any:
    answer = requests.request(method, url, headers=bearer(token), timeout=10, **kwargs)
    assert answer.status_code == status, answer.text
    return answer.json() if answer.content else None


@dataclass
class Play:
    """A game played over HTTP: each move on the next instance, from the next of its
    seat's devices (a device keeps a seat for two of its moves, so each device moves
    on both instances)."""

    servers: list[str]
    game_id: str
    moves: int = 0
    per_seat: dict[int, int] = field(default_factory=dict)
    used: set[tuple[str, str]] = field(default_factory=set)
    """(token, server) of every move sent."""

    def state(self, token: str) -> dict[str, Any]:
        public: dict[str, Any] = call(
            "GET", f"{self.servers[self.moves % 2]}/v1/games/{self.game_id}", token, 200
        )
        return public

    def play(self, devices: dict[int, list[str]], until: int | None = None) -> str:
        """Move until the game is over, or ``until`` moves were sent in all: its status."""
        for _ in range(2000):
            state = self.state(devices[0][0])
            if state["status"] != "playing" or self.moves == until:
                return str(state["status"])
            seat = state["round"]["turn"]
            sent = self.per_seat.get(seat, 0)
            token = devices[seat][sent // 2 % len(devices[seat])]
            base = self.servers[self.moves % 2]
            view = call("GET", f"{base}/v1/games/{self.game_id}/view", token, 200)
            call("POST", f"{base}/v1/games/{self.game_id}/moves", token, 200, json=choose(view))
            self.used.add((token, base))
            self.per_seat[seat] = sent + 1
            self.moves += 1
        raise AssertionError("the game did not finish")


def jwt_signer(redis_url: str, app_id: str, folder: Path) -> Callable[[str], str]:
    """An Ed25519 key pair of the app, its public half registered with the operator's
    command (``apps add-key``); ``sign(player_id)`` a JWT for the player."""
    private = ed25519.Ed25519PrivateKey.generate()
    pem = folder / "app-key.pub.pem"
    pem.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    added = admin(
        redis_url, "apps", "add-key", app_id, "main", "--alg", "EdDSA", "--public-key", str(pem)
    )
    assert added == {"id": app_id, "kid": "main", "alg": "EdDSA"}
    time.sleep(CACHE_SECONDS)  # every instance reads the app's record again by then

    def sign(player_id: str) -> str:
        now = int(time.time())
        claims = {"sub": player_id, "aud": f"t13:{app_id}", "iat": now, "exp": now + 3600}
        return jwt.encode(claims, private, algorithm="EdDSA", headers={"kid": "main"})

    return sign


def revoked_everywhere(
    servers: list[str], game_id: str, key: str, player_id: str, tokens: list[str]
) -> dict[tuple[int, int], float]:
    """Revoke the player's tokens (on the first instance, with the app's key) and
    watch each token on each instance, all at once, until it is refused: the seconds
    from the revocation's answer to each refusal, by (token, instance)."""
    view = f"/v1/games/{game_id}/view"
    for base in servers:  # accepted on both until now
        for token in tokens:
            call("GET", base + view, token, 200)
    seen: dict[tuple[int, int], float] = {}
    codes: list[Any] = []
    lock = threading.Lock()

    def watch(which: tuple[int, int], start: float) -> None:
        url, token = servers[which[1]] + view, tokens[which[0]]
        while time.monotonic() - start < 10:
            answer = requests.get(url, headers=bearer(token), timeout=10)
            if answer.status_code != 200:
                with lock:
                    seen[which] = time.monotonic() - start
                    codes.append((answer.status_code, answer.json()["code"]))
                return
            time.sleep(0.02)

    answer = call("DELETE", f"{servers[0]}/v1/players/{player_id}/tokens", key, 200)
    revoked = time.monotonic()
    assert answer == {"player_id": player_id, "revoked": len(tokens)}
    watchers = [
        threading.Thread(target=watch, args=((t, s), revoked))
        for t in range(len(tokens))
        for s in range(len(servers))
    ]
    for each in watchers:
        each.start()
    for each in watchers:
        each.join(timeout=30)
    assert len(seen) == len(tokens) * len(servers), f"still accepted: {seen}"
    assert set(codes) == {(401, "INVALID_CREDENTIAL")}
    before = call("GET", servers[0] + f"/v1/games/{game_id}", key, 200)["version"]
    for base in servers:  # nor may they move
        for token in tokens:
            move = {"type": "draw", "source": "stock"}
            call("POST", f"{base}/v1/games/{game_id}/moves", token, 401, json=move)
    assert call("GET", servers[1] + f"/v1/games/{game_id}", key, 200)["version"] == before
    return seen


def refused_everything(servers: list[str], game_id: str, key: str, credential: str) -> None:
    """The game is not found with ``credential`` (of another app) on any instance,
    for a read, its events or a move, and is left as it was (``key``: its app's)."""
    game = f"/v1/games/{game_id}"
    before = call("GET", servers[0] + game, key, 200)["version"]
    for base in servers:
        for method, path, body in (
            ("GET", game, None),
            ("GET", f"{game}/view", None),
            ("GET", f"{game}/events?after=0", None),
            ("POST", f"{game}/moves", {"type": "draw", "source": "stock"}),
        ):
            answer = requests.request(
                method, base + path, json=body, headers=bearer(credential), timeout=10
            )
            assert answer.status_code == 404, answer.text
            assert answer.json()["code"] == "GAME_NOT_FOUND"
            assert credential not in answer.text
    assert call("GET", servers[1] + game, key, 200)["version"] == before
