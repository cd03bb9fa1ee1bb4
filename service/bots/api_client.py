"""The bot client's HTTP side: JSON requests for one seat of one game, and its event stream.

Standard library only.  :class:`Client` sends the seat's bearer token on every
request.  JSON calls retry network errors with a growing pause; an error answer
raises :class:`ApiProblem`.  A view and a move answer come with the ``ETag`` of
the game's state they show (a move's ``If-Match``).  :meth:`Client.open_stream` opens
``GET /v1/games/{id}/events`` as Server-Sent Events (``Accept: text/event-stream``,
the token in ``Authorization``: a bot needs no stream ticket) and returns the
open :class:`Stream`; following it, reconnecting included, is
:mod:`service.bots.feed`'s job.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from email.message import Message
from typing import Any

USER_AGENT = "three-thirteen-bot/1"


class ApiProblem(Exception):
    """An HTTP error answer from the service."""

    def __init__(self, status: int, body: dict[str, Any], retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}: {body.get('code')} {body.get('detail')}")
        self.status = status
        self.body = body
        self.retry_after = retry_after

    @classmethod
    def from_answer(cls, status: int, headers: Message | None, raw: bytes) -> ApiProblem:
        try:
            problem = json.loads(raw) if raw else {}
        except ValueError:
            problem = {}
        if not isinstance(problem, dict):
            problem = {}
        if not problem:
            problem = {"detail": raw[:200].decode(errors="replace")}
        retry = headers.get("Retry-After") if headers else None
        try:
            retry_after = float(retry) if retry is not None else None
        except ValueError:
            retry_after = None
        return cls(status, problem, retry_after)


class Stream:
    """An open event stream: :meth:`readline` returns b"" at its end.

    :meth:`interrupt` may be called from another thread: it shuts the socket
    down, which ends a read blocked on it; the reading thread then closes.
    """

    def __init__(self, connection: http.client.HTTPConnection, sock: socket.socket) -> None:
        self._connection = connection
        self._sock = sock
        self._response = connection.getresponse()

    @property
    def response(self) -> http.client.HTTPResponse:
        return self._response

    def readline(self) -> bytes:
        return self._response.readline()

    def interrupt(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed

    def close(self) -> None:
        self.interrupt()
        self._response.close()
        self._connection.close()


@dataclass
class Client:
    """A thin JSON-over-HTTP client of one game, acting for one seat."""

    base_url: str
    game_id: str
    token: str
    timeout: float = 40.0
    network_retries: int = 8
    stream_timeout: float = 45.0
    """Longest silence on an event stream (heartbeats included) before it counts as lost."""

    def _headers(self, accept: str) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.token}",
            "Accept": accept,
            "User-Agent": USER_AGENT,
        }

    def _request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[dict[str, Any], str | None]:
        """The answer's JSON body and its ``ETag`` (None without one)."""
        url = self.base_url.rstrip("/") + path
        data = None if body is None else json.dumps(body).encode()
        all_headers = {**self._headers("application/json"), **(headers or {})}
        if data is not None:
            all_headers["Content-Type"] = "application/json"
        pause = 0.2
        for attempt in range(self.network_retries + 1):
            req = urllib.request.Request(url, data=data, headers=all_headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    result: dict[str, Any] = json.loads(resp.read() or b"{}")
                    return result, resp.headers.get("ETag")
            except urllib.error.HTTPError as exc:
                raise ApiProblem.from_answer(exc.code, exc.headers, exc.read()) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError):
                if attempt == self.network_retries:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 5.0)
        raise AssertionError("unreachable")

    @property
    def _game(self) -> str:
        return "/v1/games/" + urllib.parse.quote(self.game_id, safe="")

    def view(self) -> tuple[dict[str, Any], str | None]:
        """The seat's view, and its ETag."""
        return self._request("GET", self._game + "/view")

    def move(
        self, move: dict[str, Any], etag: str | None, key: str
    ) -> tuple[dict[str, Any], str | None]:
        """Play ``move`` if the game is still at the state ``etag`` names (the view's
        ETag, sent as ``If-Match``): the seat's new view, and its ETag."""
        headers = {"Idempotency-Key": key} | ({} if etag is None else {"If-Match": etag})
        return self._request("POST", self._game + "/moves", move, headers)

    def open_stream(self, last_event_id: str) -> Stream:
        """Open the game's SSE stream after the event ``last_event_id`` names
        (``"0"``: from the start).

        Raises :class:`ApiProblem` for an error answer, ``OSError`` (``TimeoutError``,
        ``ConnectionError``...) when the service cannot be reached.
        """
        base = urllib.parse.urlsplit(self.base_url)
        if base.scheme == "https":
            connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                base.netloc, timeout=self.stream_timeout
            )
        elif base.scheme == "http":
            connection = http.client.HTTPConnection(base.netloc, timeout=self.stream_timeout)
        else:
            raise ValueError(f"not an http(s) URL: {self.base_url}")
        headers = {**self._headers("text/event-stream"), "Cache-Control": "no-cache"}
        if last_event_id != "0":
            headers["Last-Event-ID"] = last_event_id
        try:
            connection.request("GET", base.path.rstrip("/") + self._game + "/events", None, headers)
            assert connection.sock is not None
            stream = Stream(connection, connection.sock)
        except BaseException:
            connection.close()
            raise
        response = stream.response
        if response.status != 200:
            raw = response.read(64 * 1024)
            stream.close()
            raise ApiProblem.from_answer(response.status, response.headers, raw)
        content_type = response.headers.get("Content-Type", "")
        if not content_type.startswith("text/event-stream"):
            stream.close()
            raise ApiProblem(200, {"detail": f"not an event stream: {content_type!r}"}, None)
        return stream
