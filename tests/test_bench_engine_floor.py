"""The benchmark's engine floor (bench/engine_floor.py) does a move's game work as the
service does it: the same answer, byte for byte, and the same saved game, in the same
two round trips; it leaves out only the service's HTTP layer."""

from __future__ import annotations

import importlib
import io
import sys
from typing import Any

from bench._redis_stats import delta, redis_counters, round_trips
from service.api.persistence import events_payload, snapshot
from service.creation import create_record
from service.store import key
from service.store.keys import EVENTS, STATE
from tests.api.conftest import make_app

DRAW = b'{"type":"draw","source":"stock"}'


def _engine_floor(monkeypatch: Any, redis_url: str) -> Any:
    monkeypatch.setenv("REDIS_URL", redis_url)
    sys.modules.pop("bench.engine_floor", None)  # its store is made at import, from REDIS_URL
    return importlib.import_module("bench.engine_floor")


def _post(app: Any, path: str, body: bytes, token: str | None) -> tuple[str, dict[str, str], bytes]:
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    if token is not None:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    answered: list[Any] = []
    chunks = app(environ, lambda status, headers: answered.append((status, dict(headers))))
    return answered[0][0], answered[0][1], b"".join(chunks)


def _stored_game(store: Any) -> tuple[str, dict[int, str], int]:
    record, tokens, events = create_record(
        [{"name": "a"}, {"name": "b"}], None, "classic", {}, None, False
    )
    store.create(record.id, record.to_bytes(), events_payload(events), **snapshot(record, 1))
    assert record.state is not None and record.state.round is not None
    return record.id, tokens, record.state.round.turn


def _saved(redis_client: Any, game_id: str) -> tuple[list[Any], list[Any]]:
    """The game as saved, but for the write id (new with every write)."""
    state = redis_client.hmget(key(game_id, STATE), "v", "d", "s", "p", "t", "q", "r")
    events = [fields for _id, fields in redis_client.xrange(key(game_id, EVENTS))]
    return state, events


def test_an_engine_floor_move_answers_and_saves_what_the_service_does(
    monkeypatch, redis_url, redis_client, store
):
    floor = _engine_floor(monkeypatch, redis_url)
    warm_id, warm_tokens, warm_turn = _stored_game(store)
    # connects and loads the commit script, as the benchmark's warm-up does
    _post(floor.app, f"/v1/games/{warm_id}/moves", DRAW, warm_tokens[warm_turn])
    game_id, tokens, turn = _stored_game(store)
    names = [key(game_id, STATE), key(game_id, EVENTS)]
    dumps = [redis_client.dump(name) for name in names]
    path = f"/v1/games/{game_id}/moves"
    before = redis_counters(redis_client)

    status, headers, body = _post(floor.app, path, DRAW, tokens[turn])

    used = delta(redis_counters(redis_client), before)
    assert round_trips(used, 1)["round_trips_per_move"] == 2  # one HMGET, one EVALSHA
    assert status == "200 OK"
    assert headers["ETag"] == '"2"'
    assert headers["X-Content-Type-Options"] == "nosniff"  # the service's headers
    assert int(headers["Content-Length"]) == len(body)
    by_floor = _saved(redis_client, game_id)

    for name, dumped in zip(names, dumps, strict=True):  # the game as it was
        redis_client.restore(name, 0, dumped, replace=True)
    service = make_app(redis_url).test_client()
    answer = service.post(path, data=DRAW, headers={"Authorization": f"Bearer {tokens[turn]}"})

    assert answer.status_code == 200
    assert answer.data == body
    assert _saved(redis_client, game_id) == by_floor


def test_the_engine_floor_refuses_what_it_cannot_play(monkeypatch, redis_url, store):
    floor = _engine_floor(monkeypatch, redis_url)
    game_id, tokens, turn = _stored_game(store)
    path = f"/v1/games/{game_id}/moves"
    refused = ("400 Bad Request", b"")
    assert _post(floor.app, "/v1/games/nosuchgame/moves", DRAW, tokens[turn])[::2] == refused
    assert _post(floor.app, path, DRAW, None)[::2] == refused
    assert _post(floor.app, path, DRAW, "not-a-seat")[::2] == refused
    assert _post(floor.app, path, DRAW, tokens[1 - turn])[::2] == refused  # not their turn
    assert _post(floor.app, path, b"{", tokens[turn])[::2] == refused
