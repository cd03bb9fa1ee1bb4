"""A failover under play, end to end: gunicorn behind Redis Sentinel follows the
promoted replica by itself, and with ``REDIS_WAIT_REPLICAS=1`` no move that was
answered 200 is lost.

A primary, two replicas and three Sentinels (``down-after`` 1 s) on free ports,
one instance of two workers finding the primary through the Sentinels only.
Players play their games (keyed moves, retried with the same key on 503 as the
docs say) and a spectator long-polls one of them while the primary is killed
(SIGKILL).  The test then checks that moves are answered again without any
restart, that every acknowledged move is in its game (its retry is a replay of
the same answer), and that the spectator's long poll goes on.  It prints the
outage: from the kill to the Sentinels' promotion, and to the first move
acknowledged after the kill.  Everything is stopped by PID.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.live_game import choose
from harness.redis_replication import MASTER_NAME, replicated
from harness.redis_server import INSTALL_HINT, redis_server_binary

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason=INSTALL_HINT)

PLAYERS = 3
MOVES_BEFORE = 5
MOVES_AFTER = 5


@dataclass
class Player:
    """Plays one game, one keyed move at a time, retrying a 503 with the same key."""

    base: str
    stop: threading.Event
    game: str = ""
    tokens: dict[int, str] = field(default_factory=dict)
    acknowledged: list[tuple[float, float, int, dict[str, Any], str, int]] = field(
        default_factory=list
    )
    """(sent, answered, seat, move, key, version) of each move answered 200."""
    refused: int = 0
    """Requests (reads or moves) answered 503."""
    error: str = ""

    def run(self) -> None:
        session = requests.Session()
        try:
            created = session.post(
                f"{self.base}/v1/games",
                json={"players": [{"name": "a"}, {"name": "b"}]},
                timeout=10,
            )
            assert created.status_code == 201, created.text
            self.game = created.json()["id"]
            self.tokens = {p["seat"]: p["token"] for p in created.json()["players"]}
            number = 0
            while not self.stop.is_set():
                seat, move = self._next(session)
                key = f"{self.game}-{number}"
                self._play(session, seat, move, key)
                number += 1
        except Exception as exc:  # reported by the test
            self.error = repr(exc)

    def _get(self, session: requests.Session, path: str, seat: int | None) -> dict[str, Any]:
        headers = {} if seat is None else self.auth(seat)
        while True:
            answer = session.get(f"{self.base}/v1/games/{self.game}{path}", headers=headers)
            if answer.status_code != 503:
                assert answer.status_code == 200, answer.text
                return answer.json()  # type: ignore[no-any-return]
            assert answer.headers["Retry-After"]
            self.refused += 1
            time.sleep(0.05)

    def _next(self, session: requests.Session) -> tuple[int, dict[str, Any]]:
        seat = self._get(session, "", None)["round"]["turn"]
        return seat, choose(self._get(session, "/view", seat))

    def _play(self, session: requests.Session, seat: int, move: dict[str, Any], key: str) -> None:
        while True:
            sent = time.monotonic()
            answer = session.post(
                f"{self.base}/v1/games/{self.game}/moves",
                json=move,
                headers={**self.auth(seat), "Idempotency-Key": key},
                timeout=10,
            )
            if answer.status_code == 200:
                version = answer.json()["version"]
                self.acknowledged.append((sent, time.monotonic(), seat, move, key, version))
                return
            assert answer.status_code == 503, answer.text
            assert answer.headers["Retry-After"]
            self.refused += 1
            time.sleep(0.05)

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}


@dataclass
class Spectator:
    """Long-polls a game's events (``wait=2``), remembering the last seq and when."""

    base: str
    game: str
    stop: threading.Event
    seen: list[tuple[float, int]] = field(default_factory=list)

    def run(self) -> None:
        session = requests.Session()
        after = 0
        while not self.stop.is_set():
            try:
                answer = session.get(
                    f"{self.base}/v1/games/{self.game}/events",
                    params={"after": after, "wait": 2},
                    timeout=10,
                )
            except requests.RequestException:
                continue
            if answer.status_code == 200:
                after = answer.json()["last_seq"]
                self.seen.append((time.monotonic(), after))
            else:
                time.sleep(0.05)


def _wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_gunicorn_follows_a_sentinel_failover_and_loses_no_acknowledged_move(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer],
) -> None:
    with replicated(replicas=2, sentinels=3) as group:
        server = gunicorn(
            {
                "REDIS_URL": "redis://primary.invalid:6379/0",  # the Sentinels say where
                "REDIS_SENTINELS": group.sentinel_addresses,
                "REDIS_SENTINEL_MASTER": MASTER_NAME,
                "REDIS_WAIT_REPLICAS": "1",
                "REDIS_WAIT_TIMEOUT_MS": "300",
                "WEB_CONCURRENCY": "2",
                "RATE_LIMITS": "true",
                "RATE_LIMIT_MOVES": "100000/minute",
            }
        )
        stop = threading.Event()
        players = [Player(server.url, stop) for _ in range(PLAYERS)]
        threads = [threading.Thread(target=p.run, daemon=True) for p in players]
        for thread in threads:
            thread.start()
        try:
            _wait_for(
                lambda: all(len(p.acknowledged) >= MOVES_BEFORE or p.error for p in players),
                60,
                "the games did not get going",
            )
            spectator = Spectator(server.url, players[0].game, stop)
            threading.Thread(target=spectator.run, daemon=True).start()
            _wait_for(lambda: bool(spectator.seen), 20, "the spectator saw nothing")
            old = group.primary.port
            killed = time.monotonic()
            group.primary.kill()
            group.wait_for_promotion(old)
            promoted = time.monotonic()

            def played_after(player: Player) -> int:
                return sum(1 for sent, *_rest in player.acknowledged if sent > killed)

            _wait_for(
                lambda: all(played_after(p) >= MOVES_AFTER or p.error for p in players),
                90,
                "moves were not answered again after the failover",
            )
            first = min(
                answered for p in players for sent, answered, *_ in p.acknowledged if sent > killed
            )
            # the spectator's poll may still be meeting the outage when the players are
            # done: give it time to follow on, rather than stopping it first
            _wait_for(
                lambda: any(at > first and seq > 0 for at, seq in spectator.seen),
                30,
                "the spectator did not follow the game on after the failover",
            )
        finally:
            stop.set()
            for thread in threads:
                thread.join(30)
        assert not [p.error for p in players if p.error]
        print(
            f"\nfailover: Sentinels promoted a replica {promoted - killed:.2f} s after the kill; "
            f"first move acknowledged {first - killed:.2f} s after it "
            f"({sum(p.refused for p in players)} answers 503 meanwhile)"
        )
        assert any(p.refused for p in players)  # the outage was met, and answered 503
        assert any(at > first and seq > 0 for at, seq in spectator.seen)  # it followed on

        session = requests.Session()
        for player in players:  # every acknowledged move is there, as answered
            for _sent, _answered, seat, move, key, version in player.acknowledged:
                again = session.post(
                    f"{server.url}/v1/games/{player.game}/moves",
                    json=move,
                    headers={**player.auth(seat), "Idempotency-Key": key},
                    timeout=10,
                )
                assert again.status_code == 200, (key, again.text)
                assert again.headers.get("Idempotent-Replayed") == "true", key
                assert again.json()["version"] == version, key
            public = session.get(f"{server.url}/v1/games/{player.game}", timeout=10).json()
            assert public["version"] == player.acknowledged[-1][5]
        assert "Traceback" not in server.stderr()
