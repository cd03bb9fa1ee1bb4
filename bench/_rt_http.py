"""HTTP/1.1 by hand over asyncio streams, for the real-time benchmark's clients.

A :class:`Connection` is one keep-alive TCP connection to the service: it
sends a request and reads the answer's head, then either the whole body
(``Content-Length`` or chunked) or, for a stream, the decoded chunks one by
one (a stream's events are parsed by the bot client's parser,
:class:`service.bots.sse.SseParser`).  Nothing here knows the service's API;
no HTTP library is used so that ten thousand idle connections cost the
generator little.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

READ_LIMIT = 1 << 20  # a long poll may answer with a whole game's history
IDLE_REOPEN = 4.0
"""A connection idle this long is opened anew before a request: gunicorn closes an
idle keep-alive connection after 5 s, and a request written into one that is
closing would be lost (a POST could not be retried safely)."""


class ConnectionLost(Exception):
    """The server closed the connection, or sent something that is not HTTP/1.1."""


@dataclass
class Head:
    status: int
    headers: dict[str, str]

    @property
    def chunked(self) -> bool:
        return "chunked" in self.headers.get("transfer-encoding", "").lower()

    @property
    def keep_alive(self) -> bool:
        return self.headers.get("connection", "").lower() != "close"


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class Connection:
    """One keep-alive connection to ``host:port`` (opened on first use, again after a loss)."""

    host: str
    port: int
    reader: asyncio.StreamReader | None = None
    writer: asyncio.StreamWriter | None = None
    opened: int = 0
    last_used: float = 0.0
    _head_host: bytes = field(default=b"", repr=False)

    async def open(self) -> None:
        self.close()
        self.reader, self.writer = await asyncio.open_connection(
            self.host, self.port, limit=READ_LIMIT
        )
        self._head_host = f"{self.host}:{self.port}".encode()
        self.opened += 1

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def send(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> Head:
        """Send one request and read the answer's status line and headers."""
        now = time.monotonic()
        stale = self.reader is not None and (
            self.reader.at_eof() or now - self.last_used > IDLE_REOPEN
        )
        if self.writer is None or stale:
            await self.open()
        self.last_used = now
        assert self.writer is not None and self.reader is not None
        lines = [f"{method} {target} HTTP/1.1".encode(), b"Host: " + self._head_host]
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}".encode())
        if body is not None:
            lines.append(b"Content-Length: %d" % len(body))
        self.writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + (body or b""))
        try:
            raw = await self.reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            self.close()
            raise ConnectionLost(str(exc) or type(exc).__name__) from None
        status_line, *header_lines = raw[:-4].decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
            self.close()
            raise ConnectionLost(f"not an HTTP/1.x answer: {status_line[:80]!r}")
        headers_in = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers_in[name.strip().lower()] = value.strip()
        return Head(int(parts[1]), headers_in)

    async def body(self, head: Head) -> bytes:
        """The whole body of an answer whose head :meth:`send` returned."""
        if head.chunked:
            out = bytearray()
            async for chunk in self.chunks():
                out += chunk
            data = bytes(out)
        else:
            assert self.reader is not None
            try:
                data = await self.reader.readexactly(int(head.headers.get("content-length", 0)))
            except (asyncio.IncompleteReadError, ConnectionError) as exc:
                self.close()
                raise ConnectionLost(str(exc) or type(exc).__name__) from None
        if not head.keep_alive:
            self.close()
        self.last_used = time.monotonic()
        return data

    async def request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> Response:
        head = await self.send(method, target, headers, body)
        return Response(head.status, head.headers, await self.body(head))

    async def chunks(self) -> AsyncIterator[bytes]:
        """The decoded chunks of a chunked body, until its last (empty) chunk."""
        reader = self.reader
        assert reader is not None
        try:
            while True:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.split(b";", 1)[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")  # no trailers are sent
                    return
                data = await reader.readexactly(size + 2)
                yield data[:-2]
        except (asyncio.IncompleteReadError, ConnectionError, ValueError) as exc:
            self.close()
            raise ConnectionLost(str(exc) or type(exc).__name__) from None
