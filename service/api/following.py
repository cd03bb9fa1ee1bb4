"""The events endpoint's handler: a page, a long poll, or a stream (see
:mod:`service.api.streams` for the loop they share).

Called by the Flask view (``api/game_routes.py``), which has parsed and checked
the query and headers, and by the fast lane for plain JSON long polls
(:func:`plain_long_poll`); the same answers either way.
"""

from __future__ import annotations

from typing import Any

from flask import Response

from service.api import handlers, streams
from service.api.auth import bearer_token, unauthorized
from service.api.context import call, services, store
from service.api.responses import json_response
from service.api.schemas.fields import QueryInteger, QueryNumber
from service.api.schemas.inputs import MAX_SEQ, MAX_WAIT_SECONDS

PLAIN_KEY = "t13.plain_long_poll"
"""Where the fast lane keeps ``(after, wait)`` of a plain long poll in its environ."""

_PLAIN_PARTS = {"after": QueryInteger.PATTERN, "wait": QueryNumber.PATTERN}
"""The query parameters of a plain long poll, each in the form its schema field reads."""


def plain_long_poll(environ: dict[str, Any]) -> tuple[int, float] | None:
    """``(after, wait)`` of a JSON long poll whose query holds nothing but valid
    ``after`` and ``wait`` (each at most once) and whose ``Accept`` is absent,
    ``*/*`` or ``application/json``; None for anything else (Flask answers it).

    >>> plain_long_poll({"QUERY_STRING": "after=5&wait=2.5"})
    (5, 2.5)
    >>> plain_long_poll({"QUERY_STRING": ""}), plain_long_poll({"QUERY_STRING": "after=1&after=2"})
    ((0, 0.0), None)
    >>> plain_long_poll({"QUERY_STRING": "wait=31"}), plain_long_poll({"HTTP_ACCEPT": "text/html"})
    (None, None)
    """
    if environ.get("HTTP_ACCEPT", "*/*") not in ("*/*", streams.JSON):
        return None
    found: dict[str, str] = {}
    query = environ.get("QUERY_STRING", "")
    for part in query.split("&") if query else ():
        name, sep, value = part.partition("=")
        pattern = _PLAIN_PARTS.get(name)
        if not sep or pattern is None or name in found or not pattern.fullmatch(value):
            return None
        found[name] = value
    after, wait = int(found.get("after", "0")), float(found.get("wait", "0"))
    if after > MAX_SEQ or wait > MAX_WAIT_SECONDS:
        return None
    return after, wait


def plain_follow(game_id: str) -> Response:
    """The fast lane's handler of a plain long poll (:func:`plain_long_poll`)."""
    after, wait = call().environ[PLAIN_KEY]
    return follow(game_id, streams.JSON, after, wait, None)


def follow(game_id: str, media: str, after: int, wait: float, ticket: str | None) -> Response:
    """Events of ``game_id`` after ``after``: as JSON a page, waiting up to ``wait``
    seconds for one (a long poll); as SSE or NDJSON a stream (``wait`` unused)."""
    seat = _proven_seat(game_id, ticket)
    if media == streams.JSON:
        wait = min(wait, services().config.long_poll_max_seconds)
        if wait <= 0:
            found, cursor, _deadline = store().events(game_id, after, seat)
            return _events_page(found, cursor)
    follower = streams.Follower(store(), game_id, seat, after, media)
    try:
        found = follower.read()  # what is there now (a missing game: 404)
        if media != streams.JSON:
            response = follower.stream(found)
            follower = None  # the stream's now: the server closes it when it ends
            return response
        if not found:  # the next batch, none once `wait` is over, or the process stops
            found = follower.next_batch(wait) or []
        return _events_page(found, follower.cursor)
    finally:
        if follower is not None:
            follower.close()


def _events_page(found: list[tuple[int, bytes]], cursor: int) -> Response:
    events = [streams.event_json(seq, raw)[0] for seq, raw in found]
    return json_response({"events": events, "last_seq": cursor})


def _proven_seat(game_id: str, ticket: str | None) -> int | None:
    """The seat a stream ticket or the bearer token proves (401 if it proves none),
    or None for a spectator."""
    if ticket is not None:
        seat = store().redeem_ticket(game_id, ticket)
        if seat is None:
            raise unauthorized("this stream ticket is unknown, used or expired")
        return seat
    if bearer_token() is None:
        return None
    return handlers.proven_seat(game_id)
