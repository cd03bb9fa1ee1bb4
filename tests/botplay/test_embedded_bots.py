"""``make run``: gunicorn on the embedded store runs a bot worker in its own process
(as it runs the webhook delivery worker), so bots reply and turn timers fire with no
other process running."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import requests

from harness.gunicorn_server import GunicornServer


def _until(found: Callable[[], Any], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while not (answer := found()):
        assert time.monotonic() < deadline, f"not after {timeout} s"
        time.sleep(0.05)
    return answer


def test_the_embedded_store_plays_bots_and_timers_in_process(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer],
) -> None:
    server = gunicorn({})
    assert server.bot_worker is None  # no Redis: the server's own process plays them
    session = requests.Session()
    made = session.post(
        f"{server.url}/v1/games",
        json={
            "players": [{"name": "ann"}, {"name": "bob"}, {"name": "b", "bot": "basic"}],
            "turn_timeout_seconds": 5,
            "autopilot_after_missed_turns": 1,
        },
        timeout=10,
    ).json()
    url = f"{server.url}/v1/games/{made['id']}"
    started = time.time()
    # nobody calls: the timers hand both human seats to the autopilot, one after the
    # other, and the bots play on
    public = _until(
        lambda: (
            (p := session.get(url, timeout=10).json())
            and all(player["bot"] for player in p["players"])
            and p
        ),
        60,
    )
    assert public["version"] > 3
    assert time.time() - started >= 5  # a timer ran out first
    events = session.get(f"{url}/events", params={"after": 0}, timeout=10).json()["events"]
    assert sum(e["type"] == "autopilot_on" for e in events) == 2
    assert any(e.get("bot") for e in events)
