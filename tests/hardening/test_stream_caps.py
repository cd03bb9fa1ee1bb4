"""Caps on the event streams a client holds open at once (service/api/stream_caps.py):
per client address, counted across the workers and instances of one Redis, and per
seat; over a cap a 429 ``TOO_MANY_STREAMS`` problem with ``Retry-After``; a stream
that ends gives its place back; a killed worker's places come back when their leases
lapse.  Real gunicorn instances, a real Redis (and the embedded store); clients at
127.0.0.1 and 127.0.0.2 (Linux routes all of 127/8 to lo: another client address)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from harness.events_request import SSE, EventsRequest
from harness.gunicorn_server import GunicornServer
from harness.live_game import LiveGame
from service.api.stream_caps import MIN_LEASE_SECONDS
from service.store.keys import address_streams_key, seat_streams_key

PER_ADDRESS = 5
PER_SEAT = 2
HEARTBEAT = 0.3
LEASE = max(MIN_LEASE_SECONDS, 4 * HEARTBEAT)
NDJSON = {"Accept": "application/x-ndjson"}
OTHER_ADDRESS = "127.0.0.2"
RELEASE_TIMEOUT = 10.0
"""A closed stream's place is free once the server notices (its next heartbeat)."""

ERRORS_MD = Path(__file__).resolve().parents[2] / "docs" / "ERRORS.md"


def caps_env(redis_url: str | None, **extra: str) -> dict[str, str]:
    env = {
        "RATE_LIMITS": "true",
        "STREAM_LIMIT_PER_ADDRESS": str(PER_ADDRESS),
        "STREAM_LIMIT_PER_SEAT": str(PER_SEAT),
        "SSE_HEARTBEAT_SECONDS": str(HEARTBEAT),
        "STREAM_TICKET_SECONDS": "30",
        **extra,
    }
    if redis_url is not None:
        env["REDIS_URL"] = redis_url
    return env


def refused(answer: EventsRequest, where: str, cap: int, lease: float = LEASE) -> None:
    """``answer`` is the cap's 429: problem+json, its code, and a Retry-After (at most
    a lease's life: when the first lease lapses, unless renewed)."""
    assert answer.status == 429, (answer.status, answer.body[:300])
    problem = answer.problem()
    assert problem["code"] == "TOO_MANY_STREAMS" and problem["status"] == 429
    assert f"too many open streams {where} ({cap} at most)" in problem["detail"]
    retry = int(answer.header("Retry-After") or "0")
    assert 1 <= retry <= lease + 1, retry
    assert f"retry after {retry} s" in problem["detail"]
    answer.close()


def open_until_200(
    open_: Callable[[], EventsRequest], timeout: float = RELEASE_TIMEOUT
) -> EventsRequest:
    """Open until a stream is let in (a place given back is free once the server
    has noticed its stream closed)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = open_()
        if answer.status == 200:
            return answer
        assert answer.status == 429, answer.body[:300]
        answer.close()
        assert time.monotonic() < deadline, "a closed stream's place was not given back"
        time.sleep(0.1)


@pytest.fixture
def instances(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer], redis_client: Any, redis_url: str
) -> list[GunicornServer]:
    """Two instances of two workers on one Redis: the fast lane's and Flask's."""
    return [
        gunicorn(caps_env(redis_url, WEB_CONCURRENCY="2", FAST_LANE=lane))
        for lane in ("true", "false")
    ]


def test_the_code_is_documented() -> None:
    assert "| `TOO_MANY_STREAMS` | 429 |" in ERRORS_MD.read_text()


def test_an_address_over_its_cap_is_refused_on_every_instance_and_another_is_not(
    instances: list[GunicornServer], opened: Callable[..., EventsRequest]
) -> None:
    one, two = instances
    game = LiveGame.create(one.url)
    kinds = [SSE, NDJSON, SSE, NDJSON, SSE]
    for number, headers in enumerate(kinds):  # spread over both instances and lanes
        assert opened(instances[number % 2].url, game.id, headers).status == 200
    for server in instances:
        refused(opened(server.url, game.id), "from this address", PER_ADDRESS)
        refused(opened(server.url, game.id, NDJSON), "from this address", PER_ADDRESS)
        # a long poll that would wait is one more stream
        wait = {"after": 10_000, "wait": 5}
        refused(opened(server.url, game.id, {}, wait), "from this address", PER_ADDRESS)
        # what answers at once is no stream: a page, a long poll finding its events
        page = opened(server.url, game.id, {}, {"after": 0})
        assert page.status == 200 and b'"events"' in page.body
        found = opened(server.url, game.id, {}, {"after": 0, "wait": 5})
        assert found.status == 200 and b'"game_created"' in found.body
        assert requests.get(game.url(""), timeout=10).status_code == 200
        # another address has places of its own
        assert opened(server.url, game.id, source=OTHER_ADDRESS).status == 200
        assert opened(server.url, game.id, NDJSON, source=OTHER_ADDRESS).status == 200


def ticket(game: LiveGame, seat: int) -> str:
    answer = requests.post(game.url("/stream-tickets"), headers=game.auth(seat), timeout=10)
    assert answer.status_code == 201, answer.text
    return str(answer.json()["ticket"])


def test_a_seat_holds_a_few_streams_by_token_or_ticket(
    instances: list[GunicornServer], opened: Callable[..., EventsRequest]
) -> None:
    one, two = instances
    game = LiveGame.create(one.url)
    by_token = {**SSE, **game.auth(0)}
    assert opened(one.url, game.id, by_token).status == 200
    assert opened(two.url, game.id, SSE, {"ticket": ticket(game, 0)}).status == 200
    # the seat is full, from any address, whatever proves it
    refused(opened(two.url, game.id, by_token), "on this seat", PER_SEAT)
    refused(opened(one.url, game.id, by_token, source=OTHER_ADDRESS), "on this seat", PER_SEAT)
    refused(opened(one.url, game.id, SSE, {"ticket": ticket(game, 0)}), "on this seat", PER_SEAT)
    waiting = {"after": 10_000, "wait": 5}
    refused(opened(one.url, game.id, game.auth(0), waiting), "on this seat", PER_SEAT)
    # another seat, and the game's spectators, have places of their own
    assert opened(one.url, game.id, {**NDJSON, **game.auth(1)}).status == 200
    assert opened(two.url, game.id, SSE).status == 200


def leases(redis_client: Any, key: str) -> dict[bytes, float]:
    """The leases of ``key``, lapsed or not: id -> when it lapses (ms)."""
    return dict(redis_client.zrange(key, 0, -1, withscores=True))


def given_back(redis_client: Any, key: str, seen: dict[bytes, float], count: int) -> None:
    """Until ``count`` of the leases ``seen`` in ``key`` are gone, each before it
    would have lapsed: given back, not left to lapse (the renewal of another lease
    of the set would drop a lapsed one)."""
    deadline = time.monotonic() + RELEASE_TIMEOUT
    gone: list[bytes] = []
    while len(gone) < count:
        assert time.monotonic() < deadline, "a closed stream's lease was not given back"
        time.sleep(0.05)
        now = leases(redis_client, key)
        for lease, expiry in seen.items():
            if lease not in now and lease not in gone:
                assert time.time() * 1000 < expiry, "a closed stream's lease lapsed"
                gone.append(lease)
        seen.update(now)


def test_a_stream_that_ends_gives_its_places_back(
    instances: list[GunicornServer], opened: Callable[..., EventsRequest], redis_client: Any
) -> None:
    one, two = instances
    game = LiveGame.create(one.url)
    seat = [opened(one.url, game.id, {**SSE, **game.auth(0)}) for _ in range(PER_SEAT)]
    others = [opened(two.url, game.id) for _ in range(PER_ADDRESS - PER_SEAT)]
    assert all(s.status == 200 for s in seat + others)
    refused(opened(one.url, game.id), "from this address", PER_ADDRESS)
    # the client hangs up on two streams: they give their leases back as soon as the
    # server notices (at its next write: a heartbeat)
    address, on_seat = address_streams_key("127.0.0.1"), seat_streams_key(game.id, 0)
    before = leases(redis_client, address), leases(redis_client, on_seat)
    seat[0].close()
    others[0].close()
    given_back(redis_client, address, before[0], 2)
    given_back(redis_client, on_seat, before[1], 1)
    # two places again, and no more
    assert opened(two.url, game.id, {**SSE, **game.auth(0)}).status == 200
    assert opened(one.url, game.id, NDJSON).status == 200
    refused(opened(two.url, game.id), "from this address", PER_ADDRESS)
    refused(
        opened(one.url, game.id, {**SSE, **game.auth(0)}, source=OTHER_ADDRESS),
        "on this seat",
        PER_SEAT,
    )


def held(redis_client: Any, address: str = "127.0.0.1") -> int:
    """The live leases of ``address`` in Redis."""
    key = address_streams_key(address)
    return int(redis_client.zcount(key, time.time() * 1000, "+inf"))


def test_a_long_poll_holds_a_place_while_it_waits_only(
    instances: list[GunicornServer], opened: Callable[..., EventsRequest], redis_client: Any
) -> None:
    one, two = instances
    game = LiveGame.create(one.url)
    last = requests.get(game.url("/events"), timeout=10).json()["last_seq"]
    streams = [opened(two.url, game.id) for _ in range(PER_ADDRESS - 1)]
    assert all(s.status == 200 for s in streams)
    with ThreadPoolExecutor(max_workers=1) as pool:
        params = {"after": last, "wait": 20}
        poll = pool.submit(EventsRequest, one.url, game.id, {}, params)
        deadline = time.monotonic() + RELEASE_TIMEOUT
        while held(redis_client) < PER_ADDRESS:  # the poll is waiting
            assert time.monotonic() < deadline, "a waiting long poll holds no place"
            time.sleep(0.05)
        refused(opened(one.url, game.id), "from this address", PER_ADDRESS)
        assert game.step()  # the poll is answered: its place given back as it answers
        woken = poll.result(timeout=RELEASE_TIMEOUT)
        assert woken.status == 200 and b'"events"' in woken.body
        woken.close()
    assert held(redis_client) == PER_ADDRESS - 1
    assert opened(two.url, game.id).status == 200


def test_a_seat_given_up_frees_its_place_on_the_seat_only(
    instances: list[GunicornServer], opened: Callable[..., EventsRequest]
) -> None:
    """A stream whose seat changed hands follows on as a spectator's: its place on the
    seat is free for the seat's new holder, its place on its address stays taken."""
    one, two = instances
    created = requests.post(
        one.url + "/v1/games", json={"players": [{"name": "ann"}], "seats": 3}, timeout=10
    )
    assert created.status_code == 201, created.text
    game_id = created.json()["id"]
    game_url = f"{one.url}/v1/games/{game_id}"
    joined = requests.post(f"{game_url}/players", json={"name": "bob", "seat": 1}, timeout=10)
    bob = {"Authorization": f"Bearer {joined.json()['token']}"}
    old = [opened(server.url, game_id, {**SSE, **bob}) for server in instances]
    assert [s.status for s in old] == [200] * PER_SEAT
    refused(opened(one.url, game_id, {**SSE, **bob}), "on this seat", PER_SEAT)

    assert requests.delete(f"{game_url}/seat", headers=bob, timeout=10).status_code == 200
    joined = requests.post(f"{game_url}/players", json={"name": "cat", "seat": 1}, timeout=10)
    cat = {**SSE, "Authorization": f"Bearer {joined.json()['token']}"}
    for _ in range(PER_SEAT):
        open_until_200(lambda: opened(two.url, game_id, cat))
    refused(opened(one.url, game_id, cat), "on this seat", PER_SEAT)
    # bob's streams go on (as a spectator's) and keep their places on the address
    assert opened(one.url, game_id).status == 200  # 2 + 2 + 1
    refused(opened(two.url, game_id), "from this address", PER_ADDRESS)


def test_a_killed_workers_places_come_back_when_their_leases_lapse(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer],
    redis_client: Any,
    redis_url: str,
    opened: Callable[..., EventsRequest],
) -> None:
    lease = LEASE  # longer than a worker's restart
    server = gunicorn(caps_env(redis_url))
    game = LiveGame.create(server.url)
    assert all(opened(server.url, game.id).status == 200 for _ in range(PER_ADDRESS))
    refused(opened(server.url, game.id), "from this address", PER_ADDRESS, lease)
    [worker] = server.workers()
    os.kill(worker, signal.SIGKILL)  # nothing of it runs again: no stream gives back its place
    killed = time.monotonic()
    assert held(redis_client) == PER_ADDRESS  # still counted, on every instance
    server.wait_ready()  # the master's new worker
    assert worker not in server.workers()
    # each lapses within a lease's life of its last renewal, before the kill (they
    # were opened and renewed at different moments: not all at once)
    for _ in range(PER_ADDRESS):
        open_until_200(lambda: opened(server.url, game.id), timeout=lease + 10)
    assert time.monotonic() - killed <= lease + 10
    refused(opened(server.url, game.id), "from this address", PER_ADDRESS, lease)


def test_the_embedded_store_caps_in_process_memory(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer], opened: Callable[..., EventsRequest]
) -> None:
    server = gunicorn(caps_env(None))
    game = LiveGame.create(server.url)
    held = [opened(server.url, game.id) for _ in range(PER_ADDRESS)]
    assert all(s.status == 200 for s in held)
    refused(opened(server.url, game.id), "from this address", PER_ADDRESS)
    held[0].close()
    open_until_200(lambda: opened(server.url, game.id))
