"""Reading a Server-Sent Events stream as a client does (WHATWG HTML, "event stream
interpretation"), for tests: frames with their id, event type, data and comments.

>>> [f.kind for f in parse_lines([b"retry: 2000", b"", b": hi", b"", b"id: 3",
...                               b"event: drew", b'data: {"seq":3}', b""])]
['retry', 'comment', 'event']
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any


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
    frame = Frame("comment")
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8")
        if line == "":
            if data or frame.id is not None or frame.event is not None:
                frame.kind, frame.data = "event", "\n".join(data)
                yield frame
            elif frame.retry is not None:
                frame.kind = "retry"
                yield frame
            elif frame.comments:
                yield frame
            frame, data = Frame("comment"), []
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "":
            frame.comments.append(value)
        elif name == "id":
            frame.id = value
        elif name == "event":
            frame.event = value
        elif name == "data":
            data.append(value)
        elif name == "retry" and value.isdigit():
            frame.retry = int(value)


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
