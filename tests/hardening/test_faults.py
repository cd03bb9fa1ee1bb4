"""Faults: Redis killed (SIGKILL) and restarted mid-game, and a gunicorn worker killed
mid-request.  Every change acknowledged with a 2xx survives, the event log replays to
the stored state, the service answers 503 (never 500) meanwhile and recovers alone."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.redis_server import RedisServer, redis_server_binary
from harness.replay_check import verify_game
from tests.api.conftest import create_game, make_app
from tests.lost_reply import LostReply

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason="needs redis-server")

DURABLE = ("--appendonly", "yes", "--appendfsync", "always")

WORKER_KILLS = 5
WORKER_KILLS_DEADLINE_SECONDS = 60
"""How long the worker-kill test may take to kill its workers that many times and see
at least 3 moves acknowledged in each of its games (``acked``, from version 1, past 3)."""


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """This test's own redis-server (AOF, fsync on every write), stopped by PID."""
    server = RedisServer(extra_args=DURABLE)
    server.start()
    try:
        yield server
    finally:
        server.cleanup()


def _next_move(game: Any) -> tuple[int, dict[str, Any]]:
    seat = game.public()["round"]["turn"]
    view = game.view(seat)
    legal = view["legal_moves"]
    draws = [m for m in legal if m["type"] == "draw" and m["source"] == "stock"]
    return seat, (draws or [m for m in legal if m["type"] == "discard"] or legal)[0]


def test_redis_killed_and_restarted_mid_game(own_redis):
    app = make_app(own_redis.url, RATE_LIMITS="true")
    client = app.test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="fault-redis")
    seed = "fault-redis"
    acked: list[int] = [1]
    stop = threading.Event()
    statuses: list[int] = []
    player_errors: list[BaseException] = []

    def player() -> None:
        """Plays moves until told to stop; retries each with its Idempotency-Key."""
        own = app.test_client()
        try:
            while not stop.is_set():
                r = own.get(f"/v1/games/{game.id}")
                statuses.append(r.status_code)
                if r.status_code != 200:
                    time.sleep(0.05)
                    continue
                seat = r.get_json()["round"]["turn"]
                v = own.get(f"/v1/games/{game.id}/view", headers=game.auth(seat))
                statuses.append(v.status_code)
                if v.status_code != 200:
                    continue
                legal = v.get_json()["legal_moves"]
                move = next((m for m in legal if m["type"] != "go_out"), legal[0])
                headers = {**game.auth(seat), "Idempotency-Key": uuid.uuid4().hex}
                while True:
                    m = own.post(f"/v1/games/{game.id}/moves", json=move, headers=headers)
                    statuses.append(m.status_code)
                    if m.status_code == 200:
                        acked.append(m.get_json()["version"])
                        break
                    assert m.status_code == 503, m.get_json()
                    time.sleep(0.05)
        except BaseException as exc:  # reported by the main thread
            player_errors.append(exc)

    thread = threading.Thread(target=player)
    thread.start()
    try:
        time.sleep(0.7)
        own_redis.kill()
        killed_at_version = acked[-1]
        down: list[Any] = []
        time.sleep(0.3)
        down.append(client.get("/readyz"))
        down.append(client.get(f"/v1/games/{game.id}"))
        down.append(client.get(f"/v1/games/{game.id}/view", headers=game.auth(0)))
        down.append(client.get(f"/v1/games/{game.id}/events"))
        down.append(client.post("/v1/games", json={"players": [{"name": "x"}, {"name": "y"}]}))
        down.append(client.post(f"/v1/games/{game.id}/players", json={"name": "z"}))
        down.append(
            client.post(
                f"/v1/games/{game.id}/moves",
                json={"type": "draw", "source": "stock"},
                headers=game.auth(0),
            )
        )
        for response in down:
            assert response.status_code == 503, (response.request.path, response.status_code)
            assert response.mimetype == "application/problem+json"
            assert response.get_json()["code"] == "STORE_UNAVAILABLE"
            assert int(response.headers["Retry-After"]) >= 1
        assert client.get("/healthz").status_code == 200
        time.sleep(0.5)
        own_redis.start()  # same port and directory: the AOF is replayed
        deadline = time.monotonic() + 10
        while client.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline, "the service did not recover by itself"
            time.sleep(0.1)
        recovered_at = len(acked)
        deadline = time.monotonic() + 10
        while len(acked) < recovered_at + 6:
            assert time.monotonic() < deadline, "no move acknowledged after the restart"
            assert not player_errors
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(30)
    assert not player_errors, player_errors
    assert 500 not in statuses and all(s in (200, 503) for s in statuses), set(statuses)
    assert 503 in statuses, "the player never met the outage"
    public = game.public()
    assert acked == sorted(acked) and len(set(acked)) == len(acked), "an ack was repeated"
    assert public["version"] == acked[-1] == len(acked), (public["version"], acked[-3:])
    assert killed_at_version in acked
    with own_redis.client() as raw:
        session = requests.Session()
        base = "http://local"
        session.mount(base, _WsgiAdapter(client))
        problems, _ = verify_game(raw, session, base, game.id, seed)
    assert not problems, problems


class _WsgiAdapter(requests.adapters.BaseAdapter):
    """Route a requests.Session to a Flask test client (for verify_game)."""

    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client

    def send(self, request: Any, **kwargs: Any) -> requests.Response:
        path = request.url.split("://", 1)[1].split("/", 1)[1]
        answer = self.client.open("/" + path, method=request.method, headers=dict(request.headers))
        response = requests.Response()
        response.status_code = answer.status_code
        response._content = answer.get_data()
        response.headers.update(answer.headers)
        response.url = request.url
        response.request = request
        return response

    def close(self) -> None:
        pass


def test_worker_killed_mid_request(own_redis, tmp_path: Path):
    """One gunicorn worker, SIGKILLed again and again while clients fire moves; gunicorn
    respawns it.  Clients retry with the same Idempotency-Key until answered.  Then every
    game's version equals 1 + its acknowledged moves and its log replays to its state."""
    server = GunicornServer(
        {"REDIS_URL": own_redis.url, "LOG_LEVEL": "WARNING"}, access_log=False, log_dir=tmp_path
    )
    kills = 0
    try:
        server.start()
        session = requests.Session()
        games = []
        for i in range(4):
            seed = f"worker-kill-{i}"
            r = session.post(
                server.url + "/v1/games",
                json={"players": [{"name": "a"}, {"name": "b"}], "seed": seed},
                timeout=10,
            )
            assert r.status_code == 201
            body = r.json()
            games.append({"id": body["id"], "seed": seed, "acked": 1, "tokens": {
                p["seat"]: p["token"] for p in body["players"]
            }})  # fmt: skip
        stop = threading.Event()
        statuses: list[int] = []
        errors: list[BaseException] = []

        def play(game: dict[str, Any]) -> None:
            own = requests.Session()
            try:
                while not stop.is_set():
                    r = _get(own, f"{server.url}/v1/games/{game['id']}")
                    if r is None:
                        continue
                    statuses.append(r.status_code)
                    seat = r.json()["round"]["turn"]
                    auth = {"Authorization": f"Bearer {game['tokens'][seat]}"}
                    v = _get(own, f"{server.url}/v1/games/{game['id']}/view", auth)
                    if v is None:
                        continue
                    legal = v.json()["legal_moves"]
                    move = next((m for m in legal if m["type"] != "go_out"), legal[0])
                    headers = {**auth, "Idempotency-Key": uuid.uuid4().hex}
                    while True:  # until answered, even across kills
                        try:
                            m = own.post(
                                f"{server.url}/v1/games/{game['id']}/moves",
                                json=move,
                                headers=headers,
                                timeout=10,
                            )
                        except requests.RequestException:
                            time.sleep(0.05)
                            continue
                        statuses.append(m.status_code)
                        if m.status_code == 200:
                            game["acked"] += 1
                            break
                        assert m.status_code in (409, 503), (m.status_code, m.text)
                        if m.json().get("code") != "CONFLICT":
                            assert m.status_code == 503
                        time.sleep(0.05)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=play, args=(g,)) for g in games]
        for thread in threads:
            thread.start()
        try:
            # Kill until both hold, however slowly a loaded machine respawns workers:
            # each kill waits for a move answered since the last one (the respawned
            # worker is serving, clients are mid-request), so play goes on between kills.
            began = time.monotonic()
            answered = sum(game["acked"] for game in games)
            while kills < WORKER_KILLS or any(game["acked"] <= 3 for game in games):
                assert not errors, errors
                assert time.monotonic() - began < WORKER_KILLS_DEADLINE_SECONDS, (
                    f"{kills} kills and {[game['acked'] - 1 for game in games]} moves "
                    f"acknowledged per game in {WORKER_KILLS_DEADLINE_SECONDS} s: wanted at "
                    f"least {WORKER_KILLS} kills and more than 2 moves in every game"
                )
                time.sleep(0.4)
                now_answered = sum(game["acked"] for game in games)
                if now_answered == answered:
                    continue  # no move answered since the last kill: let the worker serve
                answered = now_answered
                for pid in server.workers():
                    os.kill(pid, signal.SIGKILL)
                    kills += 1
        finally:
            stop.set()
            for thread in threads:
                thread.join(60)
        assert not errors, errors
        assert kills >= WORKER_KILLS
        assert 500 not in statuses
        server.wait_ready()
        with own_redis.client() as raw:
            for game in games:
                problems, view = verify_game(raw, session, server.url, game["id"], game["seed"])
                assert not problems, problems
                assert view["version"] == game["acked"], (view["version"], game["acked"])
                assert game["acked"] > 3
    finally:
        server.stop()


def _get(session: requests.Session, url: str, headers: Any = None) -> Any:
    try:
        r = session.get(url, headers=headers, timeout=10)
    except requests.RequestException:
        time.sleep(0.05)
        return None
    if r.status_code != 200:
        assert r.status_code == 503, (r.status_code, r.text)
        return None
    return r


def test_moves_whose_reply_was_lost_are_answered_as_made(app, client):
    """redis-py re-sends a script whose reply timed out.  The re-sent commit finds
    its own write and the move is answered as made: 200, not an idempotent replay
    (with a key) nor a conflict retried into a 409 (without one), applied once."""
    store = app.extensions["t13"].store
    store._commit = LostReply(store._commit)
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="lost-reply")
    version = game.public()["version"]
    for keyed in (True, False, True, False):
        seat, move = _next_move(game)
        headers = {"Idempotency-Key": uuid.uuid4().hex} if keyed else {}
        response = game.move(seat, move, **headers)
        assert response.status_code == 200, response.get_json()
        assert "Idempotent-Replayed" not in response.headers
        version += 1
        assert response.get_json()["version"] == version == game.public()["version"]
    moves = [e for e in game.events() if e["type"] in ("drew", "discarded")]
    assert len(moves) == 4
