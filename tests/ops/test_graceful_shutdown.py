"""Graceful stop of a real gunicorn: SIGTERM lets requests finish and ends long polls early."""

from __future__ import annotations

import threading
import time
from typing import Any

import requests

from harness.gunicorn_server import GunicornServer
from service.store import shutdown


def test_long_poll_returns_early_on_sigterm(gunicorn: Any, redis_client: Any, redis_url: str):
    server: GunicornServer = gunicorn({"REDIS_URL": redis_url})
    created = requests.post(
        server.url + "/v1/games", json={"players": [{"name": "a"}, {"name": "b"}]}, timeout=10
    )
    assert created.status_code == 201, created.text
    game_id = created.json()["id"]
    page = requests.get(f"{server.url}/v1/games/{game_id}/events", timeout=10).json()
    last, last_id = page["last_seq"], page["last_id"]

    answers: dict[str, Any] = {}

    def long_poll() -> None:
        started = time.monotonic()
        try:
            response = requests.get(
                f"{server.url}/v1/games/{game_id}/events",
                params={"after": last_id, "wait": 30},
                timeout=40,
            )
            answers["poll"] = response
        except requests.RequestException as exc:  # reported by the asserts below
            answers["poll_error"] = exc
        answers["poll_seconds"] = time.monotonic() - started

    poller = threading.Thread(target=long_poll, daemon=True)
    poller.start()
    time.sleep(1.0)  # the poll is now blocked in the worker
    assert "poll" not in answers and "poll_error" not in answers

    normal = requests.get(f"{server.url}/v1/games/{game_id}", timeout=10)
    assert normal.status_code == 200

    stopped_at = time.monotonic()
    server.terminate()
    poller.join(15)
    assert not poller.is_alive(), "the long poll did not return after SIGTERM"
    assert "poll_error" not in answers, (answers.get("poll_error"), server.logs())
    poll = answers["poll"]
    assert poll.status_code == 200, poll.text
    assert poll.json() == {"events": [], "last_seq": last, "last_id": last_id}
    assert answers["poll_seconds"] < 10
    assert time.monotonic() - stopped_at < 5

    code = server.wait(timeout=15)  # well inside graceful_timeout (LONG_POLL_MAX_SECONDS + 5)
    assert code == 0, server.logs()
    assert time.monotonic() - stopped_at < 10


def test_shutdown_wakes_every_watch_of_the_process(store: Any):
    """The store side alone: a waiting watch is woken at once, and a new one at its start."""
    store.create("g1", b"{}", [b'{"type": "created"}'])
    result: dict[str, Any] = {}

    def wait() -> None:
        with store.watch("g1") as watch:
            watch.wait(5)  # the subscription's confirmation
            started = time.monotonic()
            result["woken"] = watch.wait(20)
            result["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=wait, daemon=True)
    try:
        thread.start()
        time.sleep(0.5)
        shutdown.request_shutdown()
        thread.join(5)
        assert result["woken"] is True
        assert result["seconds"] < 1
        with store.watch("g1") as late:
            assert late.wait(0)  # already woken: the process is stopping
    finally:
        shutdown.reset()
