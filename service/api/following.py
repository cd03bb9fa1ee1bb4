"""The events endpoint's handler: a page, a long poll, or a stream (see
:mod:`service.api.streams` for the loop they share).

Its request is read once, the same way on either path: the query and the headers
by :data:`EVENTS_QUERY` and :data:`EVENTS_HEADERS` with the blueprint's parser
(the Flask view declares them with ``@blp.arguments``, which documents them; the
fast lane's handler, :func:`fast`, parses with them), then :func:`events_request`
negotiates the media and picks the cursor.  The same answers either way, errors
included (``tests/api/test_events_parsing.py`` holds them to it).
"""

from __future__ import annotations

from typing import Any

from flask import Request, Response
from werkzeug.datastructures import MIMEAccept

from service.api import event_frames, handlers, streams
from service.api.auth import APP, NOT_SEATED, principal, unauthorized
from service.api.blueprint import Blueprint
from service.api.context import call, services, store
from service.api.responses import json_response
from service.api.schemas import inputs
from service.store import GameNotFound
from service.store.history import Position, event_id

TICKET_REFUSED = "this stream ticket is unknown, expired, or its seat changed hands"

EVENTS_QUERY = inputs.EventsQuery()
EVENTS_HEADERS = inputs.EventsHeaders()

Events = tuple[str, Position, float, str | None]
"""``(media, after, wait, ticket)`` of a request for events."""


def events_request(query: dict[str, Any], headers: dict[str, Any], accept: MIMEAccept) -> Events:
    """The request for events whose query and headers were parsed by
    :data:`EVENTS_QUERY` and :data:`EVENTS_HEADERS`, with its ``Accept``: the media
    to answer in (406 when none fits) and the cursor (``Last-Event-ID`` wins over
    ``after`` for a stream)."""
    media = event_frames.negotiate(accept)
    after = query["after"]
    if media != event_frames.JSON:
        after = headers.get("last_event_id", after)
    return media, after, query["wait"], query.get("ticket")


def fast(game_id: str) -> Response:
    """The fast lane's handler: the request parsed as the Flask view's decorators
    parse it (:func:`parse`), then :func:`follow`."""
    return follow(game_id, *parse(call().environ))


def parse(environ: dict[str, Any]) -> Events:
    """The request for events of ``environ``: its query, then its headers, as the
    Flask view's decorators parse them (422 as they answer), then
    :func:`events_request`.  Read through a shallow request that does not
    populate ``environ`` (no reference cycle, nothing read of the body), gone
    once parsed: a long poll does not keep it while it waits."""
    request = Request(environ, populate_request=False, shallow=True)
    parser = Blueprint.ARGUMENTS_PARSER
    query = parser.parse(EVENTS_QUERY, request, location="query")
    headers = parser.parse(EVENTS_HEADERS, request, location="headers")
    return events_request(query, headers, request.accept_mimetypes)


def follow(game_id: str, media: str, after: Position, wait: float, ticket: str | None) -> Response:
    """Events of ``game_id`` after ``after``: as JSON a page, waiting up to ``wait``
    seconds for one (a long poll); as SSE or NDJSON a stream (``wait`` unused).
    A seat's private events are those its token (or ticket) may see: up to the
    moment the token stops holding the seat."""
    proof = _proof(game_id, ticket)
    if media == event_frames.JSON:
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
        if media != event_frames.JSON:
            follower.hold(None)  # one of the client's streams now, or 429
        found = follower.read()  # what is there now (a missing game: 404)
        if media != event_frames.JSON:
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


def _events_page(
    found: list[event_frames.Tagged], cursor: Position, reset: Position | None
) -> Response:
    events = [event_frames.event_json(seq, tag, raw)[0] for seq, tag, raw in found]
    page: dict[str, Any] = {
        "events": events,
        "last_seq": cursor.seq,
        "last_id": event_id(cursor.seq, cursor.tag or ""),
    }
    if reset is not None:
        page["reset"] = reset.as_shared()
    return json_response(page)


def _proof(game_id: str, ticket: str | None) -> streams.Proof | None:
    """The seat a stream ticket or the bearer token proves, with the hash of the
    token holding it (401 if it proves none), or None for a spectator: no token, or
    the game's app (the access check let no other app in)."""
    if ticket is not None:
        return _ticket_proof(game_id, ticket)
    found = principal()
    if found is None or found.kind == APP:  # the game's app (access checked it): a spectator
        return None
    holder = found.holder
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
