r"""A Server-Sent Events parser: lines in, events, comments and retry hints out.

It follows the WHATWG ``text/event-stream`` rules the bot client needs: a line
starting with ``:`` is a comment; ``field: value`` (one optional space after
the colon) sets ``id``, ``event``, ``data`` (several ``data`` lines join with
newlines) or ``retry`` (digits only); other fields are ignored; an empty line
dispatches the event, if it has data.

>>> parser = SseParser()
>>> lines = ["retry: 2000", "", "id: 5", "event: drew", 'data: {"seq": 5}', "", ": keep-alive", ""]
>>> [item for line in lines for item in parser.feed(line)]  # doctest: +NORMALIZE_WHITESPACE
[Retry(milliseconds=2000), Event(id='5', type='drew', data='{"seq": 5}'),
 Comment(text='keep-alive')]
>>> parser.last_event_id
'5'

Several ``data`` lines make one event; CRLF endings, ``field:value`` without
the space and a bare ``data`` line are fine; an ``id`` alone dispatches nothing:

>>> lines = ["data:a\r\n", "data", "data: b", "", "id: 9", ""]
>>> [item for line in lines for item in parser.feed(line)], parser.last_event_id
([Event(id='5', type='message', data='a\n\nb')], '9')
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    """A dispatched event: ``id`` is the last event id so far ("" if none), ``type``
    defaults to ``message``."""

    id: str
    type: str
    data: str


@dataclass(frozen=True)
class Comment:
    """A comment line (``: text``): heartbeats and the server's stop notice."""

    text: str


@dataclass(frozen=True)
class Retry:
    """The server's reconnection delay hint."""

    milliseconds: int


Item = Event | Comment | Retry


class SseParser:
    """Incremental: :meth:`feed` one decoded line at a time (its line ending removed
    or not); it returns what that line completed."""

    def __init__(self) -> None:
        self.last_event_id = ""
        self._type = ""
        self._data: list[str] = []

    def feed(self, line: str) -> list[Item]:
        line = line.rstrip("\r\n")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return [Comment(line[1:].lstrip(" "))]
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._type = value
        elif name == "id" and "\0" not in value:
            self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            return [Retry(int(value))]
        return []

    def _dispatch(self) -> list[Item]:
        data, self._data = self._data, []
        kind, self._type = self._type, ""
        if not data:
            return []
        return [Event(self.last_event_id, kind or "message", "\n".join(data))]
