"""Event streams of a real gunicorn on a real Redis: SSE and NDJSON, seats and
tickets, heartbeats, resuming with Last-Event-ID across a restart, bad input."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.live_game import LiveGame
from harness.sse import lines
from tests.realtime.followers import SSE, Follower, last_seq

HEARTBEAT = 0.3


@pytest.fixture
def server(gunicorn: Callable[[Mapping[str, str]], GunicornServer], redis_url: str) -> Any:
    return gunicorn(
        {
            "REDIS_URL": redis_url,
            "WEB_CONCURRENCY": "2",
            "SSE_HEARTBEAT_SECONDS": str(HEARTBEAT),
            "STREAM_TICKET_SECONDS": "2",
        }
    )


def ticket(game: LiveGame, seat: int) -> str:
    answer = requests.post(game.url("/stream-tickets"), headers=game.auth(seat), timeout=10)
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["expires_in"] == 2
    return body["ticket"]  # type: ignore[no-any-return]


def test_each_stream_gets_each_of_its_events_once_and_private_ones_only_for_its_seat(
    server: GunicornServer, follow: Callable[..., Follower]
):
    game = LiveGame.create(server.url, seed="streams")
    url = game.url("/events")
    by_token = follow(url, {**SSE, **game.auth(0)})
    by_ticket = follow(url, SSE, {"ticket": ticket(game, 1)})
    spectator = follow(url, SSE)
    ndjson = requests.get(url, headers={"Accept": "application/x-ndjson"}, stream=True, timeout=30)
    for _move in range(12):
        assert game.step()
    final = last_seq(game)
    for follower in (by_token, by_ticket):
        follower.wait_for(final)
    spectator.wait_for(max(e["seq"] for e in game.events()))

    assert by_token.response.headers["Content-Type"] == "text/event-stream"
    assert by_token.response.headers["Cache-Control"] == "no-cache"
    assert by_token.frames[0].kind == "retry" and by_token.frames[0].retry == 2000
    assert by_token.events() == game.events(0)
    assert by_ticket.events() == game.events(1)
    assert spectator.events() == game.events()
    for follower, seat in ((by_token, 0), (by_ticket, 1), (spectator, None)):
        received = [f for f in follower.frames if f.kind == "event"]
        assert [f.id for f in received] == [e["id"] for e in follower.events()]
        assert [f.id.split(".")[0] for f in received] == [str(e["seq"]) for e in follower.events()]
        assert [f.event for f in received] == [e["type"] for e in follower.events()]
        assert all(e.get("seat") == seat for e in follower.events() if e.get("private"))
    assert any(e.get("private") for e in by_token.events())

    got: list[dict[str, Any]] = []
    for line in lines(ndjson):
        if line:
            got.append(json.loads(line))
        if len(got) == len(game.events()):
            break
    ndjson.close()
    assert got == game.events()


def test_a_quiet_stream_sends_heartbeats(server: GunicornServer, follow: Callable[..., Follower]):
    game = LiveGame.create(server.url)
    quiet = follow(game.url("/events"), SSE, {"after": 10_000})
    time.sleep(HEARTBEAT * 4 + 0.2)
    beats = [f for f in quiet.frames if f.kind == "comment" and f.comments == ["keep-alive"]]
    assert len(beats) >= 3, quiet.frames
    assert quiet.events() == []


def test_a_stream_resumes_with_last_event_id_on_another_instance_after_a_stop(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer],
    redis_url: str,
    follow: Callable[..., Follower],
):
    first, second = (gunicorn({"REDIS_URL": redis_url, "WEB_CONCURRENCY": "1"}) for _ in "ab")
    game = LiveGame.create(second.url, seed="resume")
    before = follow(game.url("/events").replace(second.url, first.url), SSE)
    for _move in range(4):
        assert game.step()
    before.wait_for(max(e["seq"] for e in game.events()))

    stopped_at = time.monotonic()
    first.terminate()
    assert before.ended.wait(5), "the stream did not end on SIGTERM"
    assert time.monotonic() - stopped_at < 2
    assert before.frames[-1].comments == ["server stopping; reconnect with Last-Event-ID"]
    for _move in range(4):  # while the client reconnects
        assert game.step()
    last_id = [f.id for f in before.frames if f.kind == "event"][-1]
    after = follow(game.url("/events"), {**SSE, "Last-Event-ID": last_id}, {"after": 0})
    for _move in range(4):
        assert game.step()
    everything = game.events()
    after.wait_for(everything[-1]["seq"])
    assert before.events() + after.events() == everything
    assert first.wait(timeout=15) == 0


@pytest.mark.parametrize(
    ("headers", "params", "status", "code"),
    [
        ({**SSE, "Last-Event-ID": "seven"}, {}, 422, "VALIDATION_ERROR"),
        ({**SSE, "Last-Event-ID": "-1"}, {}, 422, "VALIDATION_ERROR"),
        ({**SSE, "Last-Event-ID": "9" * 20}, {}, 422, "VALIDATION_ERROR"),
        ({"Accept": "text/html"}, {}, 406, "NOT_ACCEPTABLE"),
        ({"Accept": "application/xml"}, {"wait": 1}, 406, "NOT_ACCEPTABLE"),
        (SSE, {"ticket": "short"}, 422, "VALIDATION_ERROR"),
        (SSE, {"ticket": "x" * 40 + "?"}, 422, "VALIDATION_ERROR"),
    ],
)
def test_bad_stream_requests_get_a_problem(
    server: GunicornServer, headers: dict[str, str], params: dict[str, Any], status: int, code: str
):
    game = LiveGame.create(server.url)
    response = requests.get(game.url("/events"), headers=headers, params=params, timeout=10)
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code


def test_a_stream_of_an_unknown_game_is_404(server: GunicornServer):
    response = requests.get(f"{server.url}/v1/games/nosuchgame/events", headers=SSE, timeout=10)
    assert response.status_code == 404
    assert response.json()["code"] == "GAME_NOT_FOUND"


def test_open_streams_are_counted_until_their_client_leaves(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer],
    redis_url: str,
    follow: Callable[..., Follower],
):
    server = gunicorn({"REDIS_URL": redis_url, "SSE_HEARTBEAT_SECONDS": str(HEARTBEAT)})
    game = LiveGame.create(server.url)

    def followers() -> str:
        text = requests.get(f"{server.url}/metrics", timeout=10).text
        return "".join(line for line in text.splitlines() if 'followers{kind="sse"}' in line)

    stream = follow(game.url("/events"), SSE)
    stream.wait_for(1)
    assert followers() == 't13_event_followers{kind="sse"} 1.0'
    stream.close()  # the server finds it gone at its next heartbeat
    deadline = time.monotonic() + 5
    while followers() != 't13_event_followers{kind="sse"} 0.0':
        assert time.monotonic() < deadline, followers()
        time.sleep(0.1)
