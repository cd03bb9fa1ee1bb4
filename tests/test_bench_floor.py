"""The benchmark's move floor (bench/move_floor.py) is what the README says it is: a
move's two round trips through the service's store and a move's answer, nothing more."""

from __future__ import annotations

import importlib
import io
import sys
from typing import Any

from bench._redis_stats import delta, redis_counters, round_trips
from service.api.persistence import events_payload, snapshot
from service.creation import create_record
from service.store import key
from service.store.keys import STATE


def _floor(monkeypatch: Any, redis_url: str) -> Any:
    monkeypatch.setenv("REDIS_URL", redis_url)
    sys.modules.pop("bench.move_floor", None)  # its store is made at import, from REDIS_URL
    return importlib.import_module("bench.move_floor")


def _post(app: Any, path: str) -> tuple[str, dict[str, str], bytes]:
    body = b'{"type":"draw","source":"stock"}'
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    answered: list[Any] = []
    chunks = app(environ, lambda status, headers: answered.append((status, dict(headers))))
    return answered[0][0], answered[0][1], b"".join(chunks)


def test_a_floor_move_is_two_round_trips_and_a_moves_answer(
    monkeypatch, redis_url, redis_client, store
):
    floor = _floor(monkeypatch, redis_url)
    record, _tokens, events = create_record(
        [{"name": "a"}, {"name": "b"}], None, "classic", {}, None, False
    )
    store.create(record.id, record.to_bytes(), events_payload(events), **snapshot(record, 1))
    path = f"/v1/games/{record.id}/moves"
    _post(floor.app, path)  # connects and loads the commit script, as a benchmark warm-up does
    doc = redis_client.hget(key(record.id, STATE), "d")
    before = redis_counters(redis_client)

    status, headers, body = _post(floor.app, path)

    used = delta(redis_counters(redis_client), before)
    assert round_trips(used, 1)["round_trips_per_move"] == 2  # one HMGET, one EVALSHA
    assert used["evalsha"] == 1
    assert status == "200 OK"
    assert len(body) == int(headers["Content-Length"]) == floor.ANSWER_BYTES
    assert body.startswith(b'{"turn":0,"phase":"draw"')  # what the load generator reads
    assert headers["ETag"] == '"3"'
    assert headers["X-Content-Type-Options"] == "nosniff"  # the service's headers
    saved = redis_client.hmget(key(record.id, STATE), "v", "d", "p")
    assert saved == [b"3", doc, b"p" * floor.PUBLIC_BYTES]  # the document as read


def test_the_floor_answers_404_for_a_game_it_does_not_hold(monkeypatch, redis_url, redis_client):
    floor = _floor(monkeypatch, redis_url)
    status, _headers, body = _post(floor.app, "/v1/games/nosuchgame/moves")
    assert (status, body) == ("404 Not Found", b"")
