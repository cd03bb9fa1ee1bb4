"""A rollback under live clients: Redis comes back with less than it acknowledged.

A real redis-server is snapshotted mid-game, more moves are acknowledged, then
it is killed and started again from the older snapshot (a new run: a new
epoch) and the game goes on with other moves under the same seqs.  Every kind
of client that saw the lost moves -- a long poll, an SSE stream (the live one,
and one resuming with ``Last-Event-ID``), an NDJSON stream -- is told so with a
reset naming the last event both histories share (a writer with `If-Match`: a 412
`HISTORY_DIVERGED` naming it), and then gets the restored
history's events after it: nothing missed, nothing repeated.  A restart with
all the data keeps every id valid.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.live_game import LiveGame
from harness.redis_server import RedisServer
from tests.realtime.followers import SSE, Follower


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture
def server(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer], redis_server: RedisServer
) -> GunicornServer:
    return gunicorn(
        {"REDIS_URL": redis_server.url, "WEB_CONCURRENCY": "2", "SSE_HEARTBEAT_SECONDS": "0.3"}
    )


def page(game: LiveGame, after: str) -> dict[str, Any]:
    answer = requests.get(game.url("/events"), params={"after": after}, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def history(game: LiveGame) -> list[dict[str, Any]]:
    """The game's public events now, read page by page from the start."""
    return game.events()


def last_point(game: LiveGame) -> tuple[int, str]:
    """The seq and id of the game's last event (private ones too: a spectator's
    cursor passes them)."""
    found = page(game, "0")
    return found["last_seq"], found["last_id"]


def play(game: LiveGame, moves: int) -> None:
    for _move in range(moves):
        deadline = time.monotonic() + 30
        while True:  # the first moves after Redis came back may meet a 503
            try:
                assert game.step()
                break
            except AssertionError:
                assert time.monotonic() < deadline, "the game could not go on"
                game._view = None
                time.sleep(0.2)


def replay_frames(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a client keeps from what a stream (or several) sent: each event once;
    a reset drops those after its ``shared_seq``.  Fails on an event repeated
    without a reset between (nothing may be repeated)."""
    kept: list[dict[str, Any]] = []
    for frame in frames:
        if frame["type"] == "reset":
            kept = [e for e in kept if e["seq"] <= frame["shared_seq"]]
            continue
        assert not kept or frame["seq"] > kept[-1]["seq"], f"repeated: {frame}"
        kept.append(frame)
    return kept


def wait_frames(follower: Follower, seq: int, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not any(e.get("seq", 0) >= seq for e in follower.events()):
        assert time.monotonic() < deadline, f"no event {seq}: {follower.events()[-2:]}"
        time.sleep(0.02)


def ndjson_lines(game: LiveGame, last_id: str, until_seq: int) -> list[dict[str, Any]]:
    """An NDJSON stream resumed after ``last_id``, read up to event ``until_seq``."""
    headers = {"Accept": "application/x-ndjson", "Last-Event-ID": last_id}
    lines: list[dict[str, Any]] = []
    with requests.get(game.url("/events"), headers=headers, stream=True, timeout=30) as answer:
        assert answer.status_code == 200, answer.text
        for raw in answer.iter_lines():
            if raw.strip():
                lines.append(json.loads(raw))
            if lines and lines[-1].get("seq", 0) >= until_seq:
                return lines
    raise AssertionError(f"the NDJSON stream ended before {until_seq}: {lines[-2:]}")


def test_every_kind_of_client_is_told_of_a_rollback_and_recovers(
    server: GunicornServer, redis_server: RedisServer, follow: Callable[..., Follower]
) -> None:
    game = LiveGame.create(server.url, seed="rollback")
    live = follow(game.url("/events"), SSE)
    play(game, 6)
    shared_seq, shared_id = last_point(game)
    snapshot = redis_server.snapshot()
    restored_prefix = history(game)

    play(game, 6)  # acknowledged, then lost
    lost_seq, lost_id = last_point(game)
    writer = game.public()["round"]["turn"]  # holds the ETag of its view, then lost
    seen = requests.get(game.url("/view"), headers=game.auth(writer), timeout=10)
    lost_etag, lost_view = seen.headers["ETag"], seen.json()
    assert lost_etag == f'"{lost_view["version"]}.{lost_id}"'
    assert lost_seq > shared_seq
    lost = history(game)
    wait_frames(live, lost[-1]["seq"])
    ndjson_before = ndjson_lines(game, "0", lost[-1]["seq"])
    assert [e["id"] for e in ndjson_before] == [e["id"] for e in lost]

    redis_server.roll_back(snapshot)
    game._view = None
    assert history(game) == restored_prefix
    play(game, 8)  # other moves, under the lost seqs and beyond
    now = history(game)
    assert now[: len(restored_prefix)] == restored_prefix
    last_seq, last_id = last_point(game)
    assert last_seq > lost_seq
    assert [e["id"] for e in now if shared_seq < e["seq"] <= lost_seq] != [
        e["id"] for e in lost if e["seq"] > shared_seq
    ]
    after_shared = [e for e in now if e["seq"] > shared_seq]
    reset = {"shared_seq": shared_seq, "shared_id": shared_id}

    # A writer with If-Match from the lost history: 412 HISTORY_DIVERGED, the shared
    # point given, nothing changed; it reads the view again and its move is made.
    refused = requests.post(
        game.url("/moves"),
        json=lost_view["legal_moves"][0],
        headers={**game.auth(writer), "If-Match": lost_etag},
        timeout=10,
    )
    assert refused.status_code == 412, refused.text
    problem = refused.json()
    assert problem["code"] == "HISTORY_DIVERGED"
    assert (problem["shared_seq"], problem["shared_id"]) == (shared_seq, shared_id)
    assert problem["current_version"] == game.public()["version"]
    assert last_point(game) == (last_seq, last_id)
    # the version it names may well be the game's again: the ETag still tells them apart
    fresh = requests.get(game.url("/view"), headers=game.auth(writer), timeout=10)
    assert fresh.headers["ETag"] != lost_etag
    if fresh.json()["legal_moves"]:
        made = requests.post(
            game.url("/moves"),
            json=fresh.json()["legal_moves"][0],
            headers={**game.auth(writer), "If-Match": fresh.headers["ETag"]},
            timeout=10,
        )
        assert made.status_code == 200, made.text
        game._view = None
        now = history(game)
        last_seq, last_id = last_point(game)
        after_shared = [e for e in now if e["seq"] > shared_seq]

    # A long poll from the lost history: reset, and the events after the shared point.
    told = page(game, lost_id)
    assert told["reset"] == reset
    assert told["events"] == after_shared
    assert (told["last_seq"], told["last_id"]) == (last_seq, last_id)
    assert "reset" not in page(game, told["last_id"])  # then on as usual
    assert "reset" not in page(game, shared_id)  # a point both share is no reset
    # A bare seq is taken on trust (nothing to compare): no reset.
    assert "reset" not in page(game, str(lost_seq))

    # An SSE stream resuming from the lost history: a reset frame first.
    resumed = follow(game.url("/events"), {**SSE, "Last-Event-ID": lost_id})
    wait_frames(resumed, now[-1]["seq"])
    first = [f for f in resumed.frames if f.kind == "event"][0]
    assert (first.event, first.id) == ("reset", shared_id)
    assert first.json() == {"type": "reset", **reset}
    assert replay_frames(lost + [f.json() for f in resumed.frames if f.kind == "event"]) == now

    # The SSE stream that was open all along: it ended when Redis went away (its
    # client reconnects with the last id it got) or read on; either way told.
    deadline = time.monotonic() + 15
    while not live.ended.is_set() and not any(
        e.get("seq", 0) >= now[-1]["seq"] for e in live.events()
    ):
        assert time.monotonic() < deadline, "the open stream neither ended nor caught up"
        time.sleep(0.02)
    frames = [f.json() for f in live.frames if f.kind == "event"]
    if not any(e.get("seq", 0) >= now[-1]["seq"] for e in frames):  # it ended: reconnect
        last_frame_id = [f.id for f in live.frames if f.kind == "event"][-1]
        again = follow(game.url("/events"), {**SSE, "Last-Event-ID": last_frame_id})
        wait_frames(again, now[-1]["seq"])
        frames += [f.json() for f in again.frames if f.kind == "event"]
    assert any(f["type"] == "reset" and f["shared_seq"] == shared_seq for f in frames)
    assert replay_frames(frames) == now

    # An NDJSON stream resuming from the lost history: a reset line first.
    lines = ndjson_lines(game, lost_id, now[-1]["seq"])
    assert lines[0] == {"type": "reset", **reset}
    assert replay_frames(ndjson_before + lines) == now


def test_a_restart_with_all_the_data_keeps_every_id_valid(
    server: GunicornServer, redis_server: RedisServer
) -> None:
    game = LiveGame.create(server.url, seed="restart")
    play(game, 5)
    before = history(game)
    seq, last_id = last_point(game)
    redis_server.roll_back(redis_server.snapshot())  # nothing lost: a plain restart
    game._view = None
    play(game, 3)
    told = page(game, last_id)
    assert "reset" not in told
    assert before + told["events"] == history(game)
    epochs = {e["id"].split(".")[1][8:] for e in history(game)}
    assert len(epochs) == 2  # the events written after the restart have another epoch
