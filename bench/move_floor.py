"""The transport floor of a move: the benchmark's moves with none of the service's own work.

A bare WSGI app, served by gunicorn with the service's settings and loaded by
the benchmark's moves scenario.  Every ``POST /v1/games/{id}/moves`` reads
its body and makes a move's two round trips through the service's own store
-- :meth:`GameStore.load_game` (``HMGET`` of version, document and results)
and :meth:`GameStore.commit` (the commit script, writing back the document
as read with a public view, seats' parts and two events of a move's sizes)
-- and answers a body of a move's answer's size with the service's response
headers.  It parses no move, checks no token, runs no engine and builds no
view: its ratio to the ceiling is the most that moves could reach on the
machine, the service's own work costing nothing.

It writes placeholder views into the games it is given, so the benchmark
serves it from a Redis of its own, holding copies of the games.

    gunicorn -c deploy/gunicorn.conf.py bench.move_floor:app
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bench._floor_app import MOVES_PATH, healthy, move_headers, store_from_env
from service.api.middleware import StartResponse

ANSWER_BYTES = 5_100
"""About the size of a move's answer in the benchmark: a seat's view of a
2-player game at its last round, ten rounds of results included."""

PUBLIC_BYTES, SEAT_PARTS_BYTES = 1_050, 740
"""The public view and the seats' parts a move saves, in such a game."""

EVENTS: list[bytes | tuple[bytes, int | None]] = [
    b'{"type":"drew","seat":1,"source":"stock"}',
    (b'{"type":"drew","seat":1,"source":"stock","card":"10D","private":true}', 1),
]
"""A draw's two events (a discard's are a little shorter)."""

# What the load generator reads from an answer: the phase (a draw comes next)
# and the turn; the rest is padding.
ANSWER = b'{"turn":0,"phase":"draw","pad":"'
ANSWER += b"x" * (ANSWER_BYTES - len(ANSWER) - 2) + b'"}'

store = store_from_env("bench.move_floor")


def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    match = MOVES_PATH.fullmatch(environ.get("PATH_INFO", ""))
    if match is None:
        return healthy(start_response)
    environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    game_id = match.group(1)
    found = store.load_game(game_id)
    if found is None:
        start_response("404 Not Found", [("Content-Length", "0")])
        return []
    version, doc, _results = found
    store.commit(
        game_id,
        version,
        doc,
        EVENTS,
        public=b"p" * PUBLIC_BYTES,
        seat_parts=b"q" * SEAT_PARTS_BYTES,
    )
    start_response("200 OK", move_headers(len(ANSWER), version + 1))
    return [ANSWER]
