"""A request for a game's events from a chosen local address, kept open while it is a
stream: for tests of the caps on open streams (a client of its own at 127.0.0.2, ...:
Linux routes all of 127/8 to lo).

    stream = EventsRequest(base, game_id, {"Accept": "text/event-stream"}, source="127.0.0.2")
    assert stream.status == 200
    stream.close()
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from http.client import HTTPConnection, HTTPResponse
from typing import Any
from urllib.parse import urlencode, urlsplit

SSE = {"Accept": "text/event-stream"}


class EventsRequest:
    """``GET /v1/games/{game_id}/events`` from ``source``: its status and headers,
    and its body unless it is a stream (then the connection is kept open)."""

    def __init__(
        self,
        base: str,
        game_id: str,
        headers: Mapping[str, str] = SSE,
        params: Mapping[str, Any] | None = None,
        source: str = "127.0.0.1",
    ) -> None:
        where = urlsplit(base)
        self.connection = HTTPConnection(
            where.hostname or "", where.port, timeout=30, source_address=(source, 0)
        )
        query = f"?{urlencode(params)}" if params else ""
        self.connection.request("GET", f"/v1/games/{game_id}/events{query}", headers=dict(headers))
        self.response: HTTPResponse = self.connection.getresponse()
        self.status = self.response.status
        self.body = b""
        if self.status != 200 or self.header("Content-Type") == "application/json":
            self.body = self.response.read()

    def header(self, name: str) -> str | None:
        return self.response.getheader(name)

    def problem(self) -> dict[str, Any]:
        """The problem+json answer's body."""
        assert self.header("Content-Type") == "application/problem+json", self.body[:200]
        return dict(json.loads(self.body))

    def close(self) -> None:
        self.response.close()
        self.connection.close()
