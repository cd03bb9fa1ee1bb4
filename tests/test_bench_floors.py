"""The benchmark's two floors are what the README says they are.

The move floor (bench/move_floor.py) makes a move's two round trips through the
service's store and answers a move's bytes, nothing more.  The engine floor
(bench/engine_floor.py) does a move's game work as the service does it: the same
answer, byte for byte, and the same saved game, in the same two round trips; it
leaves out only the service's HTTP layer."""

from __future__ import annotations

import importlib
import io
import sys
from typing import Any

from bench._redis_stats import delta, redis_counters, round_trips
from service.api.snapshots import events_payload, snapshot
from service.hosting.seating import create_record
from service.store import key
from service.store.keys import EVENTS, STATE
from tests.api.conftest import make_app

DRAW = b'{"type":"draw","source":"stock"}'


def _floor(monkeypatch: Any, redis_url: str, module: str) -> Any:
    monkeypatch.setenv("REDIS_URL", redis_url)
    sys.modules.pop(module, None)  # its store is made at import, from REDIS_URL
    return importlib.import_module(module)


def _post(
    app: Any, path: str, body: bytes = DRAW, token: str | None = None
) -> tuple[str, dict[str, str], bytes]:
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
    """A new 2-player game saved as the service creates one: ``(id, tokens, turn)``."""
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


# -- the move floor ---------------------------------------------------------------


def test_a_floor_move_is_two_round_trips_and_a_moves_answer(
    monkeypatch, redis_url, redis_client, store
):
    floor = _floor(monkeypatch, redis_url, "bench.move_floor")
    game_id, _tokens, _turn = _stored_game(store)
    path = f"/v1/games/{game_id}/moves"
    _post(floor.app, path)  # connects and loads the commit script, as a benchmark warm-up does
    doc = redis_client.hget(key(game_id, STATE), "d")
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
    saved = redis_client.hmget(key(game_id, STATE), "v", "d", "p")
    assert saved == [b"3", doc, b"p" * floor.PUBLIC_BYTES]  # the document as read


def test_the_floor_answers_404_for_a_game_it_does_not_hold(monkeypatch, redis_url, redis_client):
    floor = _floor(monkeypatch, redis_url, "bench.move_floor")
    status, _headers, body = _post(floor.app, "/v1/games/nosuchgame/moves")
    assert (status, body) == ("404 Not Found", b"")


# -- the engine floor -------------------------------------------------------------


def test_an_engine_floor_move_answers_and_saves_what_the_service_does(
    monkeypatch, redis_url, redis_client, store
):
    floor = _floor(monkeypatch, redis_url, "bench.engine_floor")
    warm_id, warm_tokens, warm_turn = _stored_game(store)
    # connects and loads the commit script, as the benchmark's warm-up does
    _post(floor.app, f"/v1/games/{warm_id}/moves", token=warm_tokens[warm_turn])
    game_id, tokens, turn = _stored_game(store)
    names = [key(game_id, STATE), key(game_id, EVENTS)]
    dumps = [redis_client.dump(name) for name in names]
    path = f"/v1/games/{game_id}/moves"
    before = redis_counters(redis_client)

    status, headers, body = _post(floor.app, path, token=tokens[turn])

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
    answer = service.post(
        path,
        data=DRAW,
        headers={"Authorization": f"Bearer {tokens[turn]}", "Content-Type": "application/json"},
    )

    assert answer.status_code == 200
    assert answer.data == body
    assert _saved(redis_client, game_id) == by_floor


def test_the_engine_floor_refuses_what_it_cannot_play(monkeypatch, redis_url, store):
    floor = _floor(monkeypatch, redis_url, "bench.engine_floor")
    game_id, tokens, turn = _stored_game(store)
    path = f"/v1/games/{game_id}/moves"
    refused = ("400 Bad Request", b"")
    assert _post(floor.app, "/v1/games/nosuchgame/moves", token=tokens[turn])[::2] == refused
    assert _post(floor.app, path)[::2] == refused  # no token
    assert _post(floor.app, path, token="not-a-seat")[::2] == refused
    assert _post(floor.app, path, token=tokens[1 - turn])[::2] == refused  # not their turn
    assert _post(floor.app, path, b"{", tokens[turn])[::2] == refused
