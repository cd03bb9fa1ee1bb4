"""The events endpoint's handler: a page, a long poll, or a stream (see
:mod:`service.api.streams` for the loop they share).

Called by the Flask view (``api/game_routes.py``), which has parsed and checked
the query and headers, and by the fast lane for plain requests, long polls and
streams (:func:`plain_request`); the same answers either way.
"""

from __future__ import annotations

from typing import Any

from flask import Response

from service.api import handlers, streams
from service.api.auth import NOT_SEATED, bearer_token, unauthorized
from service.api.context import call, services, store
from service.api.responses import json_response
from service.api.schemas.fields import EventId, QueryNumber
from service.api.schemas.inputs import MAX_SEQ, MAX_WAIT_SECONDS, TICKET_PATTERN
from service.hosting.tokens import hash_token
from service.store import GameNotFound
from service.store.history import Position, event_id, parse_event_id

TICKET_REFUSED = "this stream ticket is unknown, expired, or its seat changed hands"

PLAIN_KEY = "t13.plain_follow"
"""Where the fast lane keeps a plain request's ``(media, after, wait, ticket)`` in its environ."""

_PLAIN_PARTS = {
    "after": EventId.PATTERN,
    "wait": QueryNumber.PATTERN,
    "ticket": TICKET_PATTERN,
}
"""The query parameters of a plain request, each in the form its schema field reads."""

_PLAIN_MEDIA = {"*/*": streams.JSON, **{media: media for media in streams.MEDIA_TYPES}}
"""``Accept`` headers a plain request may send (absent: JSON), and what each is answered in."""


def plain_request(environ: dict[str, Any]) -> tuple[str, Position, float, str | None] | None:
    """``(media, after, wait, ticket)`` of a request for events whose query holds
    nothing but valid ``after``, ``wait`` and ``ticket`` (each at most once),
    whose ``Accept`` names exactly one of the media types (or is absent, or
    ``*/*``) and whose ``Last-Event-ID``, if any, is valid (it wins over ``after``
    for a stream); None for anything else (Flask answers it, with the same
    answer for these).

    >>> plain_request({"QUERY_STRING": "after=5&wait=2.5"})
    ('application/json', Position(seq=5, tag=None), 2.5, None)
    >>> plain_request({"QUERY_STRING": ""})[1], plain_request({"QUERY_STRING": "after=1&after=2"})
    (Position(seq=0, tag=None), None)
    >>> plain_request({"QUERY_STRING": "wait=31"}), plain_request({"HTTP_ACCEPT": "text/html"})
    (None, None)
    >>> plain_request({"QUERY_STRING": "after=5.5f0c1a2b3c4d5e6f"})[1]
    Position(seq=5, tag='5f0c1a2b3c4d5e6f')
    >>> plain_request({"HTTP_ACCEPT": "text/event-stream", "HTTP_LAST_EVENT_ID": "7"})[1]
    Position(seq=7, tag=None)
    >>> plain_request({"HTTP_ACCEPT": "text/event-stream", "HTTP_LAST_EVENT_ID": "7.00ff"})
    >>> plain_request({"HTTP_ACCEPT": "text/event-stream",
    ...                "HTTP_LAST_EVENT_ID": "7.5f0c1a2b3c4d5e6f"})[1]
    Position(seq=7, tag='5f0c1a2b3c4d5e6f')
    >>> plain_request({"HTTP_ACCEPT": "text/event-stream", "HTTP_LAST_EVENT_ID": "x"})
    >>> plain_request({"HTTP_LAST_EVENT_ID": str(2**53 + 1)})  # Flask answers it: 422
    """
    media = _PLAIN_MEDIA.get(environ.get("HTTP_ACCEPT", "*/*"))
    if media is None:
        return None
    found: dict[str, str] = {}
    query = environ.get("QUERY_STRING", "")
    for part in query.split("&") if query else ():
        name, sep, value = part.partition("=")
        pattern = _PLAIN_PARTS.get(name)
        if not sep or pattern is None or name in found or not pattern.fullmatch(value):
            return None
        found[name] = value
    after = parse_event_id(found.get("after", "0"))
    wait = float(found.get("wait", "0"))
    assert after is not None  # matched EventId.PATTERN
    resume = environ.get("HTTP_LAST_EVENT_ID")
    if resume is not None:  # checked whatever the media, as the Flask view checks it
        position = parse_event_id(resume)
        if position is None or position.seq > MAX_SEQ:
            return None
        if media != streams.JSON:
            after = position
    if after.seq > MAX_SEQ or wait > MAX_WAIT_SECONDS:
        return None
    return media, after, wait, found.get("ticket")


def plain_follow(game_id: str) -> Response:
    """The fast lane's handler of a plain request for events (:func:`plain_request`)."""
    return follow(game_id, *call().environ[PLAIN_KEY])


def follow(game_id: str, media: str, after: Position, wait: float, ticket: str | None) -> Response:
    """Events of ``game_id`` after ``after``: as JSON a page, waiting up to ``wait``
    seconds for one (a long poll); as SSE or NDJSON a stream (``wait`` unused).
    A seat's private events are those its token (or ticket) may see: up to the
    moment the token stops holding the seat."""
    proof = _proof(game_id, ticket)
    if media == streams.JSON:
        wait = min(wait, services().config.long_poll_max_seconds)
        if wait <= 0:
            seat = None if proof is None else proof[0]
            page = store().history(game_id, after, seat)
            found = page.events
            if proof is not None:
                found, _held = streams.while_held(game_id, found, *proof)
            return _events_page(found, page.cursor, page.reset)
    if proof is None and store().load_version(game_id) is None:
        # before watching: a watch subscribes the game's channel (and it lingers),
        # which an unknown id must not cost (a proof has read the game already)
        raise GameNotFound(game_id)
    follower: streams.Follower | None  # None once the stream has it
    follower = streams.Follower(game_id, proof, after, media, ticket)
    try:
        if media != streams.JSON:
            follower.hold(None)  # one of the client's streams now, or 429
        found = follower.read()  # what is there now (a missing game: 404)
        if media != streams.JSON:
            response = follower.stream(found)
            follower = None  # the stream's now: the server closes it when it ends
            return response
        reset = follower.take_reset()
        if not found and reset is None:  # the next batch, none once `wait` is over, or
            follower.hold(wait)  # the process stops; waiting, it is one of the client's
            found = follower.next_batch(wait) or []  # streams (or 429)
            reset = follower.take_reset()
        return _events_page(found, follower.cursor, reset)
    finally:
        if follower is not None:
            follower.close()


def _events_page(found: list[streams.Tagged], cursor: Position, reset: Position | None) -> Response:
    events = [streams.event_json(seq, tag, raw)[0] for seq, tag, raw in found]
    page: dict[str, Any] = {
        "events": events,
        "last_seq": cursor.seq,
        "last_id": event_id(cursor.seq, cursor.tag or ""),
    }
    if reset is not None:
        page["reset"] = streams.reset_fields(reset)
    return json_response(page)


def _proof(game_id: str, ticket: str | None) -> streams.Proof | None:
    """The seat a stream ticket or the bearer token proves, with the hash of the
    token holding it (401 if it proves none), or None for a spectator."""
    if ticket is not None:
        return _ticket_proof(game_id, ticket)
    token = bearer_token()
    if token is None:
        return None
    holder = hash_token(token)
    seat = handlers.seat_held_by(game_id, holder)
    if seat is None:
        raise unauthorized(NOT_SEATED)
    return seat, holder


def _ticket_proof(game_id: str, ticket: str) -> streams.Proof:
    """The seat ``ticket`` stands for and its holder, if the token that took it
    holds that seat still (the ticket's life renewed); else 401, and a ticket
    whose seat changed hands is forgotten."""
    config = services().config
    found = store().open_ticket(game_id, ticket, config.stream_ticket_seconds)
    if found is not None:
        seat, holder = found
        if handlers.seat_held_by(game_id, holder) == seat:
            return seat, holder
        store().void_ticket(game_id, ticket)
    raise unauthorized(TICKET_REFUSED)
