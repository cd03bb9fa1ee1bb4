"""Logs: one JSON object per line, a request id on each request's lines, never a token.

The gunicorn test runs the real server (access log on stdout, gunicorn's and
the app's logs on stderr) at LOG_LEVEL=DEBUG, makes successful and failing
requests carrying tokens, stops it, and reads everything it wrote.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from flask import Flask

from harness.gunicorn_server import GunicornServer
from service import logs
from service.app import create_app
from service.config import Config
from service.store import GameStore, connect

BOGUS_TOKEN = "bogus-token-0123456789abcdef"
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d")  # nginx's $time_iso8601
REDIS_PASSWORD = "logs-secret-pw-42"


def parse_lines(text: str) -> list[dict[str, Any]]:
    entries = []
    for line in text.splitlines():
        if line.strip():
            try:
                entries.append(json.loads(line))
            except ValueError:
                raise AssertionError(f"not a JSON log line: {line!r}") from None
    return entries


def test_gunicorn_logs_are_json_with_request_ids_and_no_tokens(
    gunicorn: Any, redis_client: Any, redis_url: str
):
    # the session Redis's default user takes any password: use one, to check it is masked
    with_password = redis_url.replace("redis://", f"redis://:{REDIS_PASSWORD}@", 1)
    server: GunicornServer = gunicorn({"REDIS_URL": with_password, "LOG_LEVEL": "DEBUG"})
    base = server.url
    created = requests.post(
        base + "/v1/games",
        json={"players": [{"name": "a"}, {"name": "b"}], "seed": "logs"},
        headers={"X-Request-ID": "req-create-1"},
        timeout=10,
    )
    assert created.status_code == 201, created.text
    assert created.headers["X-Request-ID"] == "req-create-1"
    game_id = created.json()["id"]
    tokens = [p["token"] for p in created.json()["players"]]
    turn = requests.get(f"{base}/v1/games/{game_id}", timeout=10).json()["round"]["turn"]
    mine = {"Authorization": f"Bearer {tokens[turn]}"}
    other = {"Authorization": f"Bearer {tokens[1 - turn]}"}

    calls = [
        ("GET", f"/v1/games/{game_id}/view", mine, None, 200),
        ("GET", f"/v1/games/{game_id}/view", {"Authorization": f"Bearer {BOGUS_TOKEN}"}, None, 401),
        ("POST", f"/v1/games/{game_id}/moves", other, {"type": "draw", "source": "stock"}, 409),
        ("POST", f"/v1/games/{game_id}/moves", mine, {"type": "fly"}, 422),
        ("POST", f"/v1/games/{game_id}/moves", mine, {"type": "discard", "card": "ZZ"}, 422),
        ("GET", "/v1/games/nosuchgame/view", mine, None, 404),
        ("GET", f"/v1/games/{game_id}/events?after=0", mine, None, 200),
        ("POST", f"/v1/games/{game_id}/moves", mine, {"type": "draw", "source": "stock"}, 200),
    ]
    answered_ids = []
    for number, (method, path, headers, body, status) in enumerate(calls):
        response = requests.request(
            method,
            base + path,
            json=body,
            headers={**headers, "X-Request-ID": f"req-{number}"},
            timeout=10,
        )
        assert response.status_code in (status, 400), (path, response.text)
        assert response.headers["X-Request-ID"] == f"req-{number}"
        answered_ids.append(f"req-{number}")
    # no id sent, or an unusable one: the service makes one and echoes it
    made = requests.get(f"{base}/v1/games/{game_id}", headers=mine, timeout=10)
    bad = requests.get(f"{base}/v1/games/{game_id}", headers={"X-Request-ID": "a b\tc"}, timeout=10)
    for response in (made, bad):
        rid = response.headers["X-Request-ID"]
        assert rid and rid != "a b\tc"
        answered_ids.append(rid)

    assert server.stop() == 0
    stdout, stderr = server.stdout(), server.stderr()
    access = parse_lines(stdout)
    errors = parse_lines(stderr)
    assert errors, "gunicorn wrote nothing on stderr"
    assert all({"time", "level", "logger", "message"} <= entry.keys() for entry in errors)
    logged_ids = [entry["request_id"] for entry in access]
    assert "req-create-1" in logged_ids
    for rid in answered_ids:
        assert rid in logged_ids, (rid, logged_ids)
    statuses = {entry["request_id"]: entry["status"] for entry in access}
    assert statuses["req-1"] == 401
    # numbers as numbers; one time format for the access log and the app's own lines
    for entry in access:
        assert all(type(entry[k]) is int for k in ("status", "bytes", "duration_ms", "pid"))
    for entry in access + errors:
        assert TIME.fullmatch(entry["time"]), entry
    assert any(":***@127.0.0.1" in entry["message"] for entry in errors)
    for secret in [*tokens, BOGUS_TOKEN, REDIS_PASSWORD]:
        assert secret not in stdout
        assert secret not in stderr
    assert "Bearer" not in stdout + stderr


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logs.JsonFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def probe_app(redis_client: Any, redis_url: str) -> Iterator[tuple[Flask, Collect]]:
    """The app with two extra routes: one logging, one failing (after an Authorization header)."""
    config = Config.from_env({"REDIS_URL": redis_url, "RATE_LIMITS": "false"})
    app = create_app(config, GameStore(connect(config), config=config))
    probe = logging.getLogger("service.probe")

    @app.get("/_probe/log")
    def _log() -> str:
        probe.info("probing")
        return "ok"

    @app.get("/_probe/fail")
    def _fail() -> str:
        raise RuntimeError("boom")

    handler = Collect()
    service_logger = logging.getLogger("service")
    service_logger.addHandler(handler)
    try:
        yield app, handler
    finally:
        service_logger.removeHandler(handler)


def test_app_log_lines_carry_the_request_id(probe_app: tuple[Flask, Collect]):
    app, handler = probe_app
    client = app.test_client()
    response = client.get("/_probe/log", headers={"X-Request-ID": "probe-1"})
    assert response.headers["X-Request-ID"] == "probe-1"
    entries = [json.loads(line) for line in handler.lines]
    assert {"message": "probing", "request_id": "probe-1", "path": "/_probe/log"}.items() <= (
        entries[-1].items()
    )


def test_unhandled_error_is_logged_as_json_without_the_token(probe_app: tuple[Flask, Collect]):
    app, handler = probe_app
    client = app.test_client()
    response = client.get(
        "/_probe/fail", headers={"Authorization": f"Bearer {BOGUS_TOKEN}", "X-Request-ID": "f-1"}
    )
    assert response.status_code == 500
    assert response.headers["X-Request-ID"] == "f-1"
    entries = [json.loads(line) for line in handler.lines]
    failure = next(e for e in entries if e["message"] == "unhandled error")
    assert failure["request_id"] == "f-1"
    assert "RuntimeError: boom" in failure["exception"]
    assert all(BOGUS_TOKEN not in line for line in handler.lines)
