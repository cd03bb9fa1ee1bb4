"""Rate limits (429 problem+json with Retry-After; per IP on create/join, per token on
moves; off with RATE_LIMITS=false), and games expiring after GAME_TTL_SECONDS."""

from __future__ import annotations

import dataclasses
import time

import pytest

from service.app import create_app
from service.config import Config
from service.store import GameStore, connect
from service.store.keys import EVENTS, STATE, key
from tests.api.conftest import create_game, make_app

PLAYERS = [{"name": "a"}, {"name": "b"}]


def _limited(response) -> None:
    assert response.status_code == 429, response.get_data()[:200]
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["code"] == "RATE_LIMITED"
    assert 1 <= int(response.headers["Retry-After"]) <= 60


def test_create_and_join_are_limited_per_ip(redis_client, redis_url):
    app = make_app(
        redis_url, RATE_LIMITS="true", RATE_LIMIT_CREATE="3/minute", RATE_LIMIT_JOIN="2/minute"
    )
    client = app.test_client()
    for _ in range(3):
        assert client.post("/v1/games", json={"players": PLAYERS}).status_code == 201
    _limited(client.post("/v1/games", json={"players": PLAYERS}))
    # bad requests count too, and another IP has its own budget
    other = {"REMOTE_ADDR": "10.1.2.3"}
    assert (
        client.post("/v1/games", json={"players": PLAYERS}, environ_base=other).status_code == 201
    )
    game = client.post(
        "/v1/games", json={"players": [{"name": "a"}], "seats": 4}, environ_base=other
    )
    gid = game.get_json()["id"]
    assert client.post(f"/v1/games/{gid}/players", json={"name": "b"}).status_code == 201
    assert client.post(f"/v1/games/{gid}/players", json={"name": "c"}).status_code == 201
    before = client.get(f"/v1/games/{gid}").get_json()["version"]
    _limited(client.post(f"/v1/games/{gid}/players", json={"name": "d"}))
    assert client.get(f"/v1/games/{gid}").get_json()["version"] == before
    # reads are never limited
    for _ in range(20):
        assert client.get(f"/v1/games/{gid}").status_code == 200


@pytest.mark.parametrize("hops", [0, 1, 2])
def test_the_client_address_is_taken_from_as_many_proxies_as_trusted(redis_client, redis_url, hops):
    """Behind ``hops`` proxies, each appending its peer to X-Forwarded-For, the client is
    the entry ``hops`` from the right; whatever a client put before it is ignored, and
    with no trusted proxy the header is ignored altogether."""
    app = make_app(
        redis_url, RATE_LIMITS="true", RATE_LIMIT_CREATE="1/minute", TRUSTED_PROXY_HOPS=str(hops)
    )
    client = app.test_client()
    peer = {"REMOTE_ADDR": "10.0.0.1"}  # the proxy next to the service, or the client

    def create(forwarded: str) -> int:
        headers = {"X-Forwarded-For": forwarded}
        return client.post(
            "/v1/games", json={"players": PLAYERS}, headers=headers, environ_base=peer
        ).status_code

    # forged first entries, then what the trusted proxies appended
    chain = {0: "", 1: "198.51.100.1", 2: "198.51.100.1, 10.0.0.2"}[hops]
    assert create(f"203.0.113.9, {chain}".rstrip(", ")) == 201
    for forged in ("203.0.113.10", "203.0.113.11, 203.0.113.12"):
        assert create(f"{forged}, {chain}".rstrip(", ")) == 429, forged
    if hops:  # another client behind the same proxies has its own budget
        other = chain.replace("198.51.100.1", "198.51.100.2")
        assert create(other) == 201
    else:  # without a trusted proxy every forwarded address is the peer's
        assert create("198.51.100.2") == 429


def test_moves_are_limited_per_token(redis_client, redis_url):
    app = make_app(redis_url, RATE_LIMITS="true", RATE_LIMIT_MOVES="3/minute")
    client = app.test_client()
    game = create_game(client, PLAYERS, seed="limits")
    seat = game.public()["round"]["turn"]
    other = 1 - seat
    assert game.move(seat, {"type": "draw", "source": "stock"}).status_code == 200
    for _ in range(2):
        assert game.move(seat, {"type": "draw", "source": "stock"}).status_code == 409
    version = game.public()["version"]
    _limited(game.move(seat, {"type": "draw", "source": "stock"}))
    assert game.public()["version"] == version
    # the other seat's token has its own budget, on the same IP
    assert game.move(other, {"type": "draw", "source": "stock"}).status_code == 409


def test_limits_off_with_rate_limits_false(redis_client, redis_url):
    app = make_app(redis_url, RATE_LIMITS="false", RATE_LIMIT_CREATE="1/minute")
    client = app.test_client()
    for _ in range(5):
        assert client.post("/v1/games", json={"players": PLAYERS}).status_code == 201


def test_limits_with_the_embedded_store_use_memory():
    app = make_app(None, RATE_LIMITS="true", RATE_LIMIT_CREATE="2/minute")
    client = app.test_client()
    for _ in range(2):
        assert client.post("/v1/games", json={"players": PLAYERS}).status_code == 201
    _limited(client.post("/v1/games", json={"players": PLAYERS}))


def test_games_expire_after_ttl_and_activity_refreshes_it(redis_client, redis_url):
    config = dataclasses.replace(
        Config.from_env({"REDIS_URL": redis_url, "ALLOW_SEEDED_GAMES": "true"}),
        game_ttl_seconds=2,
        rate_limits_enabled=False,
    )
    app = create_app(config, GameStore(connect(config), config=config))
    client = app.test_client()
    game = create_game(client, PLAYERS, seed="ttl")
    state, events = key(game.id, STATE), key(game.id, EVENTS)
    assert 0 < redis_client.pttl(state) <= 2000
    assert 0 < redis_client.pttl(events) <= 2000
    seat = game.public()["round"]["turn"]
    for move in ({"type": "draw", "source": "stock"}, None):
        time.sleep(1.2)
        if move is None:
            move = {"type": "discard", "card": game.view(seat)["hand"][0]}
        assert game.move(seat, move).status_code == 200  # 2.4 s after creation: still alive
        assert redis_client.pttl(state) > 1500
        assert redis_client.pttl(events) > 1500
    time.sleep(2.3)
    assert not redis_client.exists(state, events)
    for path in ("", "/events", "/view"):
        response = client.get(f"/v1/games/{game.id}{path}", headers=game.auth(seat))
        assert response.status_code == 404, path
        assert response.get_json()["code"] == "GAME_NOT_FOUND"
    gone = game.move(seat, {"type": "draw", "source": "stock"})
    assert gone.status_code == 404


def test_failed_authentications_count_against_the_address(redis_client, redis_url):
    """Each bogus token had a move budget of its own: an address could send any
    number of them.  Every 401 now counts against the address; over the limit the
    answer is 429, while a valid token from the same address still plays."""
    app = make_app(
        redis_url,
        RATE_LIMITS="true",
        RATE_LIMIT_MOVES="100/minute",
        RATE_LIMIT_AUTH_FAILURES="5/minute",
    )
    client = app.test_client()
    game = create_game(client, PLAYERS, seed="bogus")
    draw = {"type": "draw", "source": "stock"}
    bogus = [{"Authorization": f"Bearer bogus-{i:04d}-{'x' * 30}"} for i in range(8)]
    answers = [
        client.post(f"/v1/games/{game.id}/moves", json=draw, headers=bogus[0]),
        client.get(f"/v1/games/{game.id}/view", headers=bogus[1]),
        client.get(f"/v1/games/{game.id}/events", headers=bogus[2]),
        client.post(f"/v1/games/{game.id}/moves", json=draw),  # no token at all
        client.post(f"/v1/games/{game.id}/moves", json=draw, headers=bogus[3]),
    ]
    assert [a.status_code for a in answers] == [401] * 5
    for headers in bogus[4:]:
        _limited(client.post(f"/v1/games/{game.id}/moves", json=draw, headers=headers))
    _limited(client.get(f"/v1/games/{game.id}/view", headers=bogus[0]))
    seat = game.public()["round"]["turn"]
    assert game.move(seat, draw).status_code == 200  # a real token is never refused for them
    other = {"REMOTE_ADDR": "10.9.8.7"}  # another address has its own budget
    answer = client.post(
        f"/v1/games/{game.id}/moves", json=draw, headers=bogus[0], environ_base=other
    )
    assert answer.status_code == 401


def test_moves_are_counted_in_memory_while_the_limit_storage_is_down(monkeypatch):
    from service.api.limits import Limit, RateLimiter
    from service.api.problems import ApiError

    limiter = RateLimiter("memory://")
    moves = Limit.parse("moves", "2/minute")

    def down(*_args, **_kwargs):
        raise ConnectionError("storage down")

    monkeypatch.setattr(limiter.main, "hit", down)
    limiter.check(moves, "tok:x")  # counted in memory, the move goes on
    limiter.check(moves, "tok:x")
    with pytest.raises(ApiError) as refused:  # and memory still limits
        limiter.check(moves, "tok:x")
    assert refused.value.code == "RATE_LIMITED"
    assert 1 <= int(refused.value.headers["Retry-After"]) <= 60
    assert limiter.main_down_until > time.monotonic()
