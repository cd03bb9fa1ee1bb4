"""The engine floor of a move: the benchmark's moves with the game's work and nothing else.

A bare WSGI app, served by gunicorn with the service's settings and loaded by
the benchmark's moves scenario, like ``bench/move_floor.py``, and doing what a
move must do for the game itself: the two round trips through the service's
store, the record loaded from its document, the seat found from the bearer
token, the move parsed, played by the engine (``GameRecord.play``), the
answer, public view and seats' parts built (``game_views.move_texts``) and
saved with the new document and the move's events (``GameStore.commit``).
Its answer is the service's, byte for byte.

What it leaves out is the service's HTTP layer around that work: the
middleware (request id, security headers merged, metrics), the fast lane's
dispatch and request context, the handler's checks (the move's schema,
missing or wrong tokens, ``If-Match``, ``Idempotency-Key``, overdue turns,
rate limits) and the mapping of errors to answers; a request it cannot serve
gets a bare 400.  Between the move floor and the service, its ratio to the
ceiling tells what the game's own work costs and what that layer costs.

It plays the same games as the service, so the benchmark serves it from the
service's Redis (reading the games' turns and phases back before each run).

    gunicorn -c deploy/gunicorn.conf.py bench.engine_floor:app
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from bench._floor_app import MOVES_PATH, healthy, move_headers, store_from_env
from service.api.middleware import StartResponse
from service.api.snapshots import events_payload
from service.engine.errors import EngineError
from service.engine.moves import Move
from service.hosting import game_views
from service.hosting.record import GameRecord

BEARER = "Bearer "

store = store_from_env("bench.engine_floor")


def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    match = MOVES_PATH.fullmatch(environ.get("PATH_INFO", ""))
    if match is None:
        return healthy(start_response)
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    game_id = match.group(1)
    found = store.load_game(game_id)
    auth = environ.get("HTTP_AUTHORIZATION", "")
    if found is None or not auth.startswith(BEARER):
        return _refused(start_response)
    version, doc, results = found
    record = GameRecord.loaded(doc, results)
    seat = record.seat_for_token(auth[len(BEARER) :])
    if seat is None:
        return _refused(start_response)
    try:
        events = record.play(seat, Move.from_dict(orjson.loads(body)))
    except (EngineError, ValueError):  # malformed or illegal (orjson's error is a ValueError)
        return _refused(start_response)
    public, text, seat_parts = game_views.move_texts(record, version + 1, seat)
    store.commit(
        game_id,
        version,
        record.to_bytes(),
        events_payload(events),
        public=public,
        deadline=record.deadline,
        results=record.results_to_save(),
        seat_parts=seat_parts,
    )
    start_response("200 OK", move_headers(len(text), version + 1))
    return [text]


def _refused(start_response: StartResponse) -> Iterable[bytes]:
    start_response("400 Bad Request", [("Content-Length", "0")])
    return []
