"""The fast lane (service.api.fastlane) answers exactly what Flask answers.

The same script of requests -- successes, 304s, replays and every kind of error
on the hot paths -- runs against the app with the lane on and with it off, on
identical seeded games; every status, body and header (but the request id) must agree.
Then: the hot requests really skip Flask, and what the lane passes on reaches it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from flask import Flask

from service.api.fastlane import FastLane
from tests.api.conftest import create_game, make_app

TAG = re.compile(r"([0-9])\.[0-9a-f]{16}")
"""An event's tag in an id: keyed per game (so each run's games have their own)."""


def run_script(app: Flask) -> list[tuple[Any, ...]]:
    """Play one scripted session; returns what a client could observe of each answer."""
    client = app.test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="fast-lane")
    path = f"/v1/games/{game.id}"
    seen: list[tuple[Any, ...]] = []

    def record(response: Any) -> Any:
        body = response.get_data().replace(game.id.encode(), b"<id>")
        body = TAG.sub(r"\1.<tag>", body.decode()).encode()  # each game's tags are its own
        headers = sorted(
            (k, TAG.sub(r"\1.<tag>", v) if k == "ETag" else v)
            for k, v in response.headers.items()
            if k != "X-Request-ID"
        )
        seen.append((response.status_code, body, headers))
        return response

    def turn() -> int:
        return int(client.get(path).get_json()["round"]["turn"])

    def move(seat: int | None, body: Any, **headers: str) -> Any:
        auth = {"Authorization": f"Bearer {game.tokens[seat]}"} if seat is not None else {}
        kwargs: dict[str, Any] = {"data": body} if isinstance(body, bytes | str) else {"json": body}
        return record(
            client.post(f"{path}/moves", headers={**auth, **headers}, **kwargs)
        )  # fmt: skip

    seat = turn()
    other = 1 - seat
    record(client.get(path))
    record(client.get(path, headers={"If-None-Match": '"1"'}))
    record(client.get(path, headers={"If-None-Match": 'W/"1", "9"'}))
    record(client.get(path, headers={"If-None-Match": '"2"'}))
    record(client.get(f"{path}/view", headers=game.auth(seat)))
    record(client.get(f"{path}/view", headers={**game.auth(seat), "If-None-Match": '"1"'}))
    record(client.get(f"{path}/view"))
    record(client.get(f"{path}/view", headers={"Authorization": "Bearer nope"}))
    record(client.get("/v1/games/unknown-game"))
    record(client.get("/v1/games/unknown-game/view", headers=game.auth(seat)))
    move(None, {"type": "draw", "source": "stock"})
    move(other, {"type": "draw", "source": "stock"})
    move(seat, {"type": "discard", "card": "AS"})
    move(seat, b"{not json")
    move(seat, b"[1, 2]")
    move(seat, {"type": "fly"})
    move(seat, {"type": "draw", "source": "sky"})
    move(seat, {"type": "draw", "source": "stock"}, **{"If-Match": '"7"'})
    move(seat, {"type": "draw", "source": "stock"}, **{"Idempotency-Key": ""})
    move(seat, {"type": "draw", "source": "stock"}, **{"Idempotency-Key": "k1"})
    move(seat, {"type": "draw", "source": "stock"}, **{"Idempotency-Key": "k1"})
    move(seat, {"type": "draw", "source": "discard"}, **{"Idempotency-Key": "k1"})
    hand = client.get(f"{path}/view", headers=game.auth(seat)).get_json()["hand"]
    move(seat, {"type": "go_out", "discard": hand[0], "melds": [hand[1:4]]})
    move(seat, {"type": "discard", "card": hand[0]}, **{"If-Match": '"2"'})
    record(client.get(path, headers={"If-None-Match": '"2"'}))
    record(client.get(f"{path}/view", headers=game.auth(other)))
    record(client.get(f"{path}/events?after=0"))
    record(client.get(f"{path}/events?after=3&wait=0.2", headers=game.auth(seat)))
    record(client.get(f"{path}/events?wait=0.1&after=99", headers={"Accept": "application/json"}))
    record(client.get(f"{path}/events?after=2", headers={"Authorization": "Bearer nope"}))
    record(client.get(f"{path}/events?wait=31"))
    record(client.get(f"{path}/events?after=1&after=2"))
    record(client.get(f"{path}/events?after=x"))
    record(client.get(f"{path}/events", headers={"Accept": "text/html"}))
    record(client.get("/v1/games/unknown-game/events?wait=1"))
    record(client.head(path))
    return seen


def test_the_fast_lane_answers_exactly_what_flask_answers(redis_client, redis_url):
    fast = run_script(make_app(redis_url, FAST_LANE="true"))
    slow = run_script(make_app(redis_url, FAST_LANE="false"))
    assert len(fast) == len(slow) > 25
    for step, (a, b) in enumerate(zip(fast, slow, strict=True)):
        assert a == b, f"request {step} differs"
    statuses = {status for status, _body, _headers in fast}
    assert {200, 304, 400, 401, 404, 409, 412, 422} <= statuses


def flask_hits(app: Flask) -> list[str]:
    """Count the requests that get past the fast lane to Flask."""
    lane = app.wsgi_app.__self__.app.__self__  # the middleware wraps the lane (bound methods)
    assert isinstance(lane, FastLane)
    hits: list[str] = []
    flask_app = lane.app

    def counting(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        hits.append(f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}")
        return flask_app(environ, start_response)

    lane.app = counting
    return hits


@pytest.mark.parametrize("rate_limits", ["false", "true"])
def test_hot_requests_skip_flask_and_the_rest_reach_it(redis_client, redis_url, rate_limits):
    app = make_app(redis_url, RATE_LIMITS=rate_limits)
    client = app.test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="fast-lane")
    hits = flask_hits(app)
    seat = client.get(f"/v1/games/{game.id}").get_json()["round"]["turn"]
    client.get(f"/v1/games/{game.id}", headers={"If-None-Match": '"1"'})
    client.get(f"/v1/games/{game.id}/view", headers=game.auth(seat))
    moved = game.move(seat, {"type": "draw", "source": "stock"})
    assert moved.status_code == 200
    client.get(f"/v1/games/{game.id}/events?after=2&wait=0.1", headers=game.auth(seat))
    client.get(f"/v1/games/{game.id}/events", headers={"Accept": "text/event-stream"}).close()
    resumed = {"Accept": "application/x-ndjson", "Last-Event-ID": "2"}
    client.get(f"/v1/games/{game.id}/events", headers=resumed).close()
    either = {"Accept": "text/event-stream, application/json;q=0.5"}  # negotiated as Flask does
    client.get(f"/v1/games/{game.id}/events", headers=either).close()
    assert client.get(f"/v1/games/{game.id}/events?after=x&wait=99").status_code == 422
    # with rate limits on too: moves are counted before their handler, on either path
    assert hits == []
    client.get(f"/v1/games/{game.id}/")
    client.head(f"/v1/games/{game.id}")
    client.post(f"/v1/games/{game.id}/moves", data=b"x" * 70_000, headers=game.auth(seat))
    client.get(f"/v1/games/{game.id}/players")  # a method the route does not answer
    assert hits == [
        f"GET /v1/games/{game.id}/",
        f"HEAD /v1/games/{game.id}",
        f"POST /v1/games/{game.id}/moves",
        f"GET /v1/games/{game.id}/players",
    ]


def test_a_move_over_the_limit_is_refused_the_same_on_both_paths(redis_client, redis_url):
    answers = {}
    for lane in ("true", "false"):
        app = make_app(redis_url, RATE_LIMITS="true", RATE_LIMIT_MOVES="1/minute", FAST_LANE=lane)
        client = app.test_client()
        game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="fast-lane-limit")
        seat = client.get(f"/v1/games/{game.id}").get_json()["round"]["turn"]
        assert game.move(seat, {"type": "draw", "source": "stock"}).status_code == 200
        refused = game.move(seat, {"type": "discard", "card": game.view(seat)["hand"][0]})
        assert client.get(f"/v1/games/{game.id}").get_json()["version"] == 2
        answers[lane] = (
            refused.status_code,
            refused.mimetype,
            refused.get_json()["code"],
            "Retry-After" in refused.headers,
        )
    assert (
        answers["true"]
        == answers["false"]
        == (
            429,
            "application/problem+json",
            "RATE_LIMITED",
            True,
        )
    )


def test_the_fast_lane_can_be_turned_off(redis_client, redis_url):
    app = make_app(redis_url, FAST_LANE="false")
    assert not isinstance(app.wsgi_app.__self__.app.__self__, FastLane)
    game = create_game(app.test_client(), [{"name": "a"}, {"name": "b"}])
    assert app.test_client().get(f"/v1/games/{game.id}").status_code == 200
