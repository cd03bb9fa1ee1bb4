"""A crowd of clients quick-joining at once, against real gunicorn instances, and
the checks the lobby must pass after it: no seat given twice, no game over-filled,
every client seated once or given an error it can act on."""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import requests

ACTIONABLE = {"LOBBY_BUSY", "STORE_UNAVAILABLE", "RATE_LIMITED"}
"""Problems a quick-join may answer under load: each says to retry (Retry-After)."""


@dataclass
class Crowd:
    """What the crowd was answered: seats ``(game, seat, token)`` per client, problems."""

    seats: dict[int, tuple[str, int, str]] = field(default_factory=dict)
    problems: dict[int, dict[str, Any]] = field(default_factory=dict)
    created: int = 0
    seconds: float = 0.0


def quick_join_crowd(bases: list[str], clients: int, seats: int) -> Crowd:
    """``clients`` threads, released together, each quick-joining a ``seats``-seat
    classic game once, spread round robin over the instances at ``bases``."""
    barrier = threading.Barrier(clients)
    crowd = Crowd()
    lock = threading.Lock()
    spread = itertools.cycle(bases)
    targets = [next(spread) for _ in range(clients)]

    def client(i: int) -> None:
        with requests.Session() as session:
            barrier.wait()
            answer = session.post(
                f"{targets[i]}/v1/lobby/quick-join",
                json={"name": f"c{i}", "ruleset": "classic", "seats": seats},
                timeout=120,
            )
        with lock:
            if answer.status_code == 201:
                body = answer.json()
                crowd.seats[i] = (body["id"], body["seat"], body["token"])
                crowd.created += body["created"]
            else:
                problem = answer.json()
                assert answer.headers["Content-Type"] == "application/problem+json", answer.text
                assert problem["code"] in ACTIONABLE, problem
                assert answer.headers.get("Retry-After"), problem
                crowd.problems[i] = problem

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    crowd.seconds = time.monotonic() - started
    assert len(crowd.seats) + len(crowd.problems) == clients, "a client got no answer"
    return crowd


def check_crowd(base: str, crowd: Crowd, clients: int, seats: int) -> list[str]:
    """Every seat given once and proven by its token, no game over ``seats``, the
    games full and started; the games' ids."""
    taken = Counter((game, seat) for game, seat, _token in crowd.seats.values())
    assert max(taken.values()) == 1, "a seat was given twice"
    games = sorted({game for game, _seat, _token in crowd.seats.values()})
    for game in games:
        public = requests.get(f"{base}/v1/games/{game}", timeout=10).json()
        names = [p["name"] for p in public["players"]]
        assert len(names) == seats and None not in names, "every game full, none over"
        seated = {crowd.seats[i][1]: f"c{i}" for i in crowd.seats if crowd.seats[i][0] == game}
        assert names == [seated.get(s) for s in range(seats)], "the game's seats are its joiners'"
        assert public["status"] == "playing" and public["listed"]
    for game, seat, token in crowd.seats.values():
        view = requests.get(
            f"{base}/v1/games/{game}/view", headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
        assert view.status_code == 200 and view.json()["seat"] == seat
    assert len(games) == crowd.created, "each game was made by one of its joiners"
    return games
