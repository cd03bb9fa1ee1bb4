"""A crowd of clients quick-joining at once, against real gunicorn instances, and
the checks the lobby must pass after it: no seat given twice, no game over-filled,
every client seated once or given an error it can act on."""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import requests

ACTIONABLE = {"LOBBY_BUSY", "STORE_UNAVAILABLE", "RATE_LIMITED", "CONFLICT"}
"""Problems a quick-join may answer under load: each says to retry."""

TRIES = 20
"""Requests a client makes at most: it retries an actionable problem after its
``Retry-After``, with the same ``Idempotency-Key``, as a client should."""


@dataclass
class Crowd:
    """What the crowd was answered: seats ``(game, seat, token)`` per client, the
    last problem of each client left without one, the problems retried."""

    seats: dict[int, tuple[str, int, str]] = field(default_factory=dict)
    problems: dict[int, dict[str, Any]] = field(default_factory=dict)
    retried: Counter[str] = field(default_factory=Counter)
    made: list[int] = field(default_factory=list)
    """The clients answered ``created`` (the table listed the game for them; a
    client that gave its ticket back after a failure leaves its game to others)."""
    seconds: float = 0.0


def quick_join_crowd(bases: list[str], clients: int, seats: int) -> Crowd:
    """``clients`` threads, released together, each quick-joining a ``seats``-seat
    classic game (once, retrying actionable problems with its key), spread round
    robin over the instances at ``bases``."""
    barrier = threading.Barrier(clients)
    crowd = Crowd()
    lock = threading.Lock()
    spread = itertools.cycle(bases)
    targets = [next(spread) for _ in range(clients)]

    def client(i: int) -> None:
        key = {"Idempotency-Key": str(uuid.uuid4())}
        with requests.Session() as session:
            barrier.wait()
            for _try in range(TRIES):
                answer = session.post(
                    f"{targets[i]}/v1/lobby/quick-join",
                    json={"name": f"c{i}", "ruleset": "classic", "seats": seats},
                    headers=key,
                    timeout=120,
                )
                if answer.status_code == 201:
                    break
                problem = answer.json()
                assert answer.headers["Content-Type"] == "application/problem+json", answer.text
                assert problem["code"] in ACTIONABLE, problem
                with lock:
                    crowd.retried[problem["code"]] += 1
                time.sleep(float(answer.headers.get("Retry-After", "1")))
        with lock:
            if answer.status_code == 201:
                body = answer.json()
                crowd.seats[i] = (body["id"], body["seat"], body["token"])
                if body["created"]:
                    crowd.made.append(i)
            else:
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
    made = [crowd.seats[i][0] for i in crowd.made]
    assert len(made) == len(set(made)), "no game made for two clients"
    return games
