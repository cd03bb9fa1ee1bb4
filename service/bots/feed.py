"""Following a game's event stream in a thread, reconnecting with ``Last-Event-ID``.

:class:`EventFeed` reads the SSE stream that :meth:`Client.open_stream` opens
and hands each new event (a dict with ``seq`` and ``type``) to the caller
through :meth:`EventFeed.take`.  It reads on while the caller thinks, so a
slow brain never holds the stream back.

When the stream ends (the service's stop notice, ``: server stopping...``,
then EOF), breaks, or stays silent longer than the client's ``stream_timeout``
(the service sends heartbeats), the feed waits the service's ``retry:`` hint
(growing on repeated failures, with jitter) and opens the stream again with
``Last-Event-ID`` set to the id (``<seq>.<tag>``) of the last event it handed
out: nothing is missed, and an event seen twice (it should not be) is
dropped, never handed out again.

When the game's history is not the one the feed followed (Redis came back
with less than it acknowledged), the service sends a reset frame (``event:
reset``) naming the last point both histories share; the feed hands it out
as an item of type ``reset`` (with ``shared_seq`` and ``shared_id``) before
the events that follow that point, which it hands out even if their seqs
were handed out before: the caller forgets what it had after ``shared_seq``
and reads the view again.
429, 502, 503 and 504 answers (a proxy's too, while the service is away)
are retried, after ``Retry-After`` if they have one; other error answers
(401, 404, 406...) and too many failures in a row end the feed and are
raised by :meth:`take`.
"""

from __future__ import annotations

import http.client
import json
import queue
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from service.bots.api_client import ApiProblem, Stream
from service.bots.sse import Comment, Event, Retry, SseParser

RETRYABLE = (429, 502, 503, 504)
STOP_NOTICE = "server stopping"


@dataclass
class EventFeed:
    """Follows one stream from ``after`` (a seq: the events after it are handed out),
    ``last_id`` the id of its event (``"0"``: from the start)."""

    open_stream: Callable[[str], Stream]
    after: int = 0
    last_id: str = "0"
    retry_seconds: float = 1.0
    """Reconnection delay until the service sends its ``retry:`` hint."""
    max_backoff: float = 30.0
    max_failures: int = 8
    """Reconnects in a row that deliver nothing before the feed gives up."""
    log: Callable[[str], None] = lambda line: None
    resumes: list[int] = field(default_factory=list)
    """The seq of every reconnect's ``Last-Event-ID``."""
    stop_notices: int = 0
    duplicates: int = 0
    resets: list[dict[str, Any]] = field(default_factory=list)
    """Every reset the service sent (also handed out by :meth:`take`)."""

    def __post_init__(self) -> None:
        self._items: queue.Queue[dict[str, Any] | BaseException] = queue.Queue()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._stream: Stream | None = None
        self._jitter = random.Random()
        self._retry_after = 0.0  # a 429/503's Retry-After, for the next pause
        self._thread = threading.Thread(target=self._run, name="event-feed", daemon=True)

    def start(self) -> EventFeed:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop following (ends a blocked read) and wait for the thread."""
        self._stop.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.interrupt()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=10)

    def __enter__(self) -> EventFeed:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take(self, block: bool = True, linger: float = 0.01) -> list[dict[str, Any]]:
        """The events received since the last call, oldest first.

        With ``block`` it waits for at least one.  It then keeps taking until
        nothing more arrives within ``linger`` seconds, so the events of one
        change, sent together, come out together.  Raises what ended the feed.
        """
        taken: list[dict[str, Any]] = []
        while True:
            try:
                if block and not taken:
                    item = self._items.get()
                else:
                    item = self._items.get(timeout=linger)
            except queue.Empty:
                return taken
            if isinstance(item, BaseException):
                self._items.put(item)  # every later call raises it too
                raise item
            taken.append(item)

    def _run(self) -> None:
        failures = 0
        try:
            while not self._stop.is_set():
                delivered = self._follow_once()
                if self._stop.is_set():
                    return
                failures = 0 if delivered else failures + 1
                if failures > self.max_failures:
                    raise ConnectionError(
                        f"event stream lost: {failures} reconnects in a row failed"
                    )
                self._pause(failures)
                self.resumes.append(self.after)
        except BaseException as exc:  # handed to the caller by take()
            self._items.put(exc)

    def _pause(self, failures: int) -> None:
        delay = min(self.retry_seconds * 2 ** max(0, failures - 1), self.max_backoff)
        delay *= self._jitter.uniform(1.0, 1.25)
        delay = max(delay, min(self._retry_after, self.max_backoff))
        self._retry_after = 0.0
        self.log(
            f"  event stream lost; reconnecting in {delay:.1f} s (Last-Event-ID: {self.last_id})"
        )
        self._stop.wait(delay)

    def _follow_once(self) -> bool:
        """Open the stream and read it to its end; whether it delivered anything."""
        try:
            stream = self.open_stream(self.last_id)
        except ApiProblem as problem:
            if problem.status not in RETRYABLE:
                raise
            self._retry_after = problem.retry_after or 0.0
            return False
        except (OSError, http.client.HTTPException):
            return False
        with self._lock:
            self._stream = stream
        if self._stop.is_set():  # close() ran before the stream was published
            stream.close()
            return False
        parser = SseParser()
        delivered = False
        try:
            while not self._stop.is_set():
                line = stream.readline()
                if not line:
                    break  # EOF: the service closed the stream
                for item in parser.feed(line.decode("utf-8")):
                    self._handle(item)
                    delivered = True
        except (OSError, http.client.HTTPException):
            pass  # a broken or silent stream: reconnect (a malformed one raises)
        finally:
            with self._lock:
                self._stream = None
            stream.close()
        return delivered

    def _handle(self, item: Event | Comment | Retry) -> None:
        if isinstance(item, Retry):
            self.retry_seconds = item.milliseconds / 1000
        elif isinstance(item, Comment):
            if item.text.startswith(STOP_NOTICE):
                self.stop_notices += 1
        elif item.type == "reset":
            reset = json.loads(item.data)
            self.after, self.last_id = int(reset["shared_seq"]), str(reset["shared_id"])
            self.resets.append(reset)
            self.log(f"  the game's history changed: back to event {self.last_id}")
            self._items.put(reset)
        else:
            event = json.loads(item.data)
            seq = int(event["seq"])
            if item.id != event.get("id") or item.id.split(".")[0] != str(seq):
                raise ValueError(f"event id {item.id!r} is not that of event {seq}")
            if seq <= self.after:
                self.duplicates += 1
                return
            self.after, self.last_id = seq, item.id
            self._items.put(event)
