"""Reading a Server-Sent Events stream as a client does, for tests: frames with their
id, event type, data and comments, parsed by the project's one SSE parser
(:class:`service.bots.sse.SseParser`, the bot client's).

>>> [f.kind for f in parse_lines([b"retry: 2000", b"", b": hi", b"", b"id: 3",
...                               b"event: drew", b'data: {"seq":3}', b""])]
['retry', 'comment', 'event']
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from service.bots.sse import Comment, Event, Retry, SseParser


@dataclass
class Frame:
    kind: str  # "event", "comment" or "retry"
    id: str | None = None
    event: str | None = None
    data: str = ""
    comments: list[str] = field(default_factory=list)
    retry: int | None = None

    def json(self) -> Any:
        return json.loads(self.data)


def parse_lines(lines: Iterable[bytes]) -> Iterator[Frame]:
    """Frames of a stream given line by line (without their line ends)."""
    parser = SseParser()
    for line in lines:
        for item in parser.feed(line.decode("utf-8")):
            if isinstance(item, Event):
                yield Frame("event", id=item.id, event=item.type, data=item.data)
            elif isinstance(item, Comment):
                yield Frame("comment", comments=[item.text])
            elif isinstance(item, Retry):
                yield Frame("retry", retry=item.milliseconds)


def lines(response: Any) -> Iterator[bytes]:
    """The lines of a streamed ``requests`` response, each as soon as it is in
    (chunk by chunk as the server sends them)."""
    pending = b""
    for chunk in response.iter_content(chunk_size=None):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        yield from complete


def frames(response: Any) -> Iterator[Frame]:
    """Frames of a streamed ``requests`` response."""
    return parse_lines(lines(response))
