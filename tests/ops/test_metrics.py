"""Metrics as an operator scrapes them: every worker's added up, followers apart.

A real gunicorn with two gevent workers and ``PROMETHEUS_MULTIPROC_DIR`` (as compose
and k8s run it) must show the same totals on every scrape, whichever worker answers.
Clients following a game's events are timed in ``t13_event_follow_seconds``, never in
the request-latency histogram, while still counted as requests.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from flask.testing import FlaskClient
from prometheus_client import REGISTRY

from harness.gunicorn_server import GunicornServer
from tests.api.conftest import make_app

PLAYERS = {"players": [{"name": "a"}, {"name": "b"}]}


def _sample(text: str, name: str, labels: str = "") -> float:
    """One sample of a text exposition (0 when absent); ``labels`` a regex of its labels."""
    found = re.search(rf"^{name}(\{{{labels}\}})? (\S+)$", text, re.M)
    return float(found.group(2)) if found else 0.0


def test_every_scrape_adds_up_both_workers(
    gunicorn: Any, redis_client: Any, redis_url: str, tmp_path: Path
) -> None:
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    (metrics_dir / "counter_1.db").write_bytes(b"left by an earlier run")
    server: GunicornServer = gunicorn(
        {
            "REDIS_URL": redis_url,
            "WEB_CONCURRENCY": "2",
            "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
            "SSE_HEARTBEAT_SECONDS": "0.2",
        }
    )
    assert len(server.workers()) == 2
    assert not (metrics_dir / "counter_1.db").exists(), "the master empties it at start"
    # Create games on new connections until both workers have made some.
    created = 0
    while len({e["pid"] for e in _creates(server)}) < 2:
        assert created < 100, "one worker took every connection"
        answer = requests.post(server.url + "/v1/games", json=PLAYERS, timeout=10)
        assert answer.status_code == 201
        created += 1
        _until(lambda n=created: len(_creates(server)) == n)  # noqa: B023
    game_id = answer.json()["id"]
    scrapes = [requests.get(server.url + "/metrics", timeout=10).text for _ in range(10)]
    assert {_sample(text, "t13_games_created_total", 'app="none"') for text in scrapes} == {created}

    # An SSE stream held for a while: a follower, timed apart from the requests.
    with requests.get(
        f"{server.url}/v1/games/{game_id}/events",
        headers={"Accept": "text/event-stream"},
        stream=True,
        timeout=10,
    ) as stream:
        assert stream.status_code == 200
        time.sleep(0.5)
    events_route = r'method="GET",route="[^"]*/events"'

    def followed() -> str:
        text = requests.get(server.url + "/metrics", timeout=10).text
        return text if _sample(text, "t13_event_follow_seconds_count", 'kind="sse"') else ""

    _until(lambda: bool(followed()))
    text = followed()
    assert _sample(text, "t13_event_follow_seconds_sum", 'kind="sse"') >= 0.5
    assert _sample(text, "t13_event_followers", 'kind="sse"') == 0
    # the workers' files sort the labels by name: app first
    assert (
        _sample(text, "t13_http_requests_total", 'app="none",' + events_route + ',status="200"')
        == 1
    )
    assert _sample(text, "t13_http_request_duration_seconds_count", events_route) == 0


def _creates(server: GunicornServer) -> list[dict[str, Any]]:
    lines = server.stdout().splitlines()
    return [e for e in map(json.loads, lines) if e["path"] == "/v1/games"]


def _until(condition: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)


def _in_process(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.parametrize("fast_lane", [True, False], ids=["fast lane", "flask"])
def test_a_long_poll_is_timed_as_a_follower_and_a_page_read_as_a_request(
    redis_client: Any, redis_url: str, fast_lane: bool
) -> None:
    client: FlaskClient = make_app(redis_url, FAST_LANE=str(fast_lane)).test_client()
    game_id = client.post("/v1/games", json=PLAYERS).get_json()["id"]
    last = client.get(f"/v1/games/{game_id}/events").get_json()["last_seq"]
    route = "/v1/games/<game_id:game_id>/events"
    timed = {"method": "GET", "route": route}

    def counts() -> tuple[float, float, float, float]:
        return (
            _in_process("t13_http_requests_total", **timed, status="200", app="none"),
            _in_process("t13_http_request_duration_seconds_count", **timed),
            _in_process("t13_event_follow_seconds_count", kind="long_poll"),
            _in_process("t13_event_follow_seconds_sum", kind="long_poll"),
        )

    before = counts()
    waited = client.get(f"/v1/games/{game_id}/events?after={last}&wait=0.3")
    assert waited.status_code == 200 and waited.get_json()["events"] == []
    after_poll = counts()
    assert after_poll[:3] == (before[0] + 1, before[1], before[2] + 1)
    assert after_poll[3] - before[3] >= 0.3
    page = client.get(f"/v1/games/{game_id}/events?after={last}")
    assert page.status_code == 200
    after_page = counts()
    assert after_page[:3] == (after_poll[0] + 1, after_poll[1] + 1, after_poll[2])
