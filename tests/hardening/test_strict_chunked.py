"""Chunked request bodies through gunicorn are bounded like the others (defect 7): over
the limit a 413 that applies nothing, within it the move is played."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from harness.gunicorn_server import GunicornServer
from tests.hardening.conftest import snapshot
from tests.hardening.strict import DRAW, PROBLEM


def _chunked(url: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        chunks = (body[i : i + 16384] for i in range(0, len(body), 16384))
        conn.request("POST", path, body=chunks, headers=headers, encode_chunked=True)
        response = conn.getresponse()
        return response.status, (response.getheader("Content-Type"), response.read())
    except (ConnectionResetError, BrokenPipeError):  # refused before all was sent
        return 413, None
    finally:
        conn.close()


@pytest.fixture(scope="module", params=["true", "false"], ids=["fast-lane", "flask"])
def server(request: Any, _redis_target: Any) -> Iterator[GunicornServer]:
    with GunicornServer({"REDIS_URL": _redis_target.url, "FAST_LANE": request.param}) as running:
        yield running


def _created(server: GunicornServer) -> tuple[str, dict[int, str], int]:
    status, (_ctype, raw) = _chunked(
        server.url,
        "/v1/games",
        orjson.dumps({"players": [{"name": "a"}, {"name": "b"}], "seed": "chunked"}),
        {"Content-Type": "application/json"},
    )
    assert status == 201, raw
    data = orjson.loads(raw)
    tokens = {p["seat"]: p["token"] for p in data["players"]}
    conn = http.client.HTTPConnection(server.url.removeprefix("http://"), timeout=10)
    conn.request("GET", f"/v1/games/{data['id']}")
    turn = orjson.loads(conn.getresponse().read())["round"]["turn"]
    conn.close()
    return data["id"], tokens, turn


def test_a_chunked_body_over_the_limit_is_413_and_applies_nothing(server, redis_client):
    game_id, tokens, turn = _created(server)
    before = snapshot(redis_client, game_id)
    padded = orjson.dumps(DRAW) + b" " * 256 * 1024  # valid JSON in its first 64 KB
    headers = {"Authorization": f"Bearer {tokens[turn]}", "Content-Type": "application/json"}
    status, answer = _chunked(server.url, f"/v1/games/{game_id}/moves", padded, headers)
    assert status == 413, answer
    if answer is not None:
        assert answer[0] == PROBLEM and orjson.loads(answer[1])["code"] == "PAYLOAD_TOO_LARGE"
    assert snapshot(redis_client, game_id) == before
    big_create = b'{"players": [{"name": "a"}, {"name": "b"}]}' + b" " * 256 * 1024
    status, _answer = _chunked(server.url, "/v1/games", big_create, headers)
    assert status == 413


def test_a_chunked_move_within_the_limit_is_played(server, redis_client):
    game_id, tokens, turn = _created(server)
    headers = {"Authorization": f"Bearer {tokens[turn]}", "Content-Type": "application/json"}
    body = orjson.dumps(DRAW) + b" " * 1000
    status, (_ctype, raw) = _chunked(server.url, f"/v1/games/{game_id}/moves", body, headers)
    assert status == 200, raw
    assert orjson.loads(raw)["version"] == 2
