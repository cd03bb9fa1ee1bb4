"""A follower further behind than one read's page catches up at once: a stream
sends every page of what it missed before it waits, and a long poll reads on past
a page holding only other seats' private events instead of waiting."""

from __future__ import annotations

from typing import Any

import pytest

from harness.sse import parse_lines
from service.api import streams
from tests.api.conftest import create_game, make_app, play_on


@pytest.fixture
def game(redis_client: Any, redis_url: str) -> Any:
    app = make_app(redis_url, SSE_HEARTBEAT_SECONDS="0.2")
    made = create_game(app.test_client(), [{"name": "a"}, {"name": "b"}], seed="paging")
    play_on(made, 12)
    return made


def test_a_stream_sends_every_page_of_its_history_before_its_first_heartbeat(
    game: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "PAGE_EVENTS", 4)
    history = game.events()
    assert len(history) > 3 * 4
    response = game.client.get(
        f"/v1/games/{game.id}/events", headers={"Accept": "text/event-stream"}, buffered=False
    )
    received = b""
    for chunk in response.response:
        if chunk.startswith(b": keep-alive"):
            break
        received += chunk
    response.close()
    frames = parse_lines(received.split(b"\n"))
    assert [frame.json() for frame in frames if frame.kind == "event"] == history


def test_a_long_poll_reads_on_past_a_page_of_other_seats_private_events(
    game: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "PAGE_EVENTS", 1)
    mine = game.events(0)
    gap = next(i for i in range(len(mine) - 1) if mine[i + 1]["seq"] > mine[i]["seq"] + 1)
    after = mine[gap]["seq"]  # then seat 1's private event(s), then seat 0's next one
    # a first wait subscribes this process to the game (and the channel lingers): the
    # subscription's confirmation, which makes a waiter read again, is not what helps
    game.client.get(f"/v1/games/{game.id}/events?after={mine[-1]['seq']}&wait=0.05")
    answer = game.client.get(
        f"/v1/games/{game.id}/events?after={after}&wait=2", headers=game.auth(0)
    )
    assert answer.get_json()["events"] == [mine[gap + 1]]
