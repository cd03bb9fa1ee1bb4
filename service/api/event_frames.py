"""The events endpoint's media and frames: its media types, the choice among
them, and an event or a reset as a long poll, an SSE stream or an NDJSON
stream sends it.  Pure functions of what the store read
(:mod:`service.api.streams` follows the game and sends them)."""

from __future__ import annotations

from typing import Any

import orjson
from werkzeug.datastructures import MIMEAccept

from service.api.problems import ApiError
from service.store.history import Position, event_id

JSON = "application/json"
SSE = "text/event-stream"
NDJSON = "application/x-ndjson"
MEDIA_TYPES = (JSON, SSE, NDJSON)
"""What the events endpoint answers in, the first being the default (``*/*``, no Accept)."""

RETRY_MILLISECONDS = 2000
"""The reconnection delay an SSE stream asks of ``EventSource`` (its ``retry:`` field)."""

Tagged = tuple[int, str, bytes]
"""An event as a follower reads it: ``(seq, tag, event JSON)`` (:mod:`service.store.history`)."""


def negotiate(accept: MIMEAccept) -> str:
    """The media type to answer in, from the request's ``Accept`` (406 if none fits;
    none sent: JSON)."""
    media = accept.best_match(MEDIA_TYPES) if accept.provided else JSON
    if media is None:
        raise ApiError(
            "NOT_ACCEPTABLE",
            f"the events are served as {', '.join(MEDIA_TYPES)}: accept one of them",
        )
    return media


def event_json(seq: int, tag: str, raw: bytes) -> tuple[dict[str, Any], bytes]:
    """A stored event as it is sent: its fields after ``seq`` and ``id``
    (:func:`~service.store.history.event_id`); and its JSON text."""
    event = {"seq": seq, "id": event_id(seq, tag), **orjson.loads(raw)}
    return event, orjson.dumps(event)


def sse_frames(batch: list[Tagged]) -> bytes:
    r"""Server-Sent Events frames for ``batch``, each with its event's id.

    >>> frame = sse_frames([(3, "5f0c1a2b00000000", b'{"type":"drew","seat":1}')])
    >>> frame.split(b"\n")  # doctest: +NORMALIZE_WHITESPACE
    [b'id: 3.5f0c1a2b00000000', b'event: drew',
     b'data: {"seq":3,"id":"3.5f0c1a2b00000000","type":"drew","seat":1}', b'', b'']
    """
    frames = []
    for seq, tag, raw in batch:
        event, text = event_json(seq, tag, raw)
        frames.append(
            b"id: %s\nevent: %s\ndata: %s\n\n"
            % (event_id(seq, tag).encode(), event["type"].encode(), text)
        )
    return b"".join(frames)


def reset_json(shared: Position) -> bytes:
    """A reset as a stream sends it: the shared point (:meth:`Position.as_shared`)
    as an object of type ``reset``."""
    return orjson.dumps({"type": "reset", **shared.as_shared()})


def sse_reset(shared: Position) -> bytes:
    r"""The SSE frame telling a stream's client that the game's history is not the
    one it followed: it goes back to ``shared`` (its id, so that a reconnection
    resumes from there).

    >>> sse_reset(Position(4, "5f0c1a2b00000000"))  # doctest: +ELLIPSIS
    b'id: 4.5f0c1a2b00000000\nevent: reset\ndata: {"type":"reset","shared_seq":4,...}\n\n'
    """
    return b"id: %s\nevent: reset\ndata: %s\n\n" % (
        event_id(shared.seq, shared.tag or "").encode(),
        reset_json(shared),
    )


def ndjson_lines(batch: list[Tagged]) -> bytes:
    r"""NDJSON lines for ``batch``.

    >>> ndjson_lines([(3, "5f0c1a2b00000000", b'{"type":"drew"}')])
    b'{"seq":3,"id":"3.5f0c1a2b00000000","type":"drew"}\n'
    """
    return b"".join(event_json(seq, tag, raw)[1] + b"\n" for seq, tag, raw in batch)


def ndjson_reset(shared: Position) -> bytes:
    r"""The NDJSON line of a reset (see :func:`sse_reset`).

    >>> ndjson_reset(Position(0, ""))
    b'{"type":"reset","shared_seq":0,"shared_id":"0"}\n'
    """
    return reset_json(shared) + b"\n"
