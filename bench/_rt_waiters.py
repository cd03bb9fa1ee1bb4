"""The waiting clients of the real-time benchmark, in a process of their own.

:func:`waiter_process` (the target of a ``multiprocessing`` process) holds its
share of the waiters on one asyncio loop, each on its own connection:

* ``poll``: ``GET /v1/games/{id}/events?after=N&wait=25``, again after every
  answer with the new cursor (``last_seq``), on the same keep-alive connection;
* ``sse``: ``GET /v1/games/{id}/events`` with ``Accept: text/event-stream``,
  read chunk by chunk; on a lost stream it reconnects with ``Last-Event-ID``.

Either starts from ``after=0`` (so the first answer is the game's history) and
may carry a seat's bearer token.  For every event received it keeps the seq,
the receipt time (``time.monotonic()``: CLOCK_MONOTONIC, one clock for every
process of the machine, so the movers' times in another process compare) and a
CRC of the event's JSON (keys sorted), for the parent to check against the
game's full event list.  The parent talks to it over a pipe:

    child -> ("ready", connected, not, counters)   once every waiter got its first
                                                   answer, or at the ready timeout
    parent -> ("finish", {waiter index: last seq it must reach}, timeout)
    child -> ("results", [per waiter dict], counters)
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import resource
import time
import zlib
from collections import Counter
from multiprocessing.connection import Connection as Pipe
from typing import Any

import orjson

from bench._rt_http import Connection, ConnectionLost
from service.bots.sse import Comment, Item, Retry, SseParser

POLL_WAIT = 25
READ_TIMEOUT = 60.0  # beyond the poll's wait and two SSE heartbeats
CONNECT_PARALLEL = 64
RETRY_PAUSE = 0.5


def retry_after(headers: dict[str, str]) -> float:
    """What a polite client waits before retrying a 503/429: Retry-After (else
    RETRY_PAUSE), spread by up to half again so that retries do not come in step."""
    try:
        pause = float(headers.get("retry-after", RETRY_PAUSE))
    except ValueError:
        pause = RETRY_PAUSE
    return pause * random.uniform(1.0, 1.5)


def digest(event: dict[str, Any]) -> int:
    return zlib.crc32(orjson.dumps(event, option=orjson.OPT_SORT_KEYS))


class Waiter:
    """One waiting client: what it asks for and what it received."""

    def __init__(self, spec: dict[str, Any], host: str, port: int, counters: Counter[str]) -> None:
        self.index: int = spec["index"]
        self.game: str = spec["game"]
        self.token: str | None = spec["token"]
        self.mode: str = spec["mode"]
        self.conn = Connection(host, port)
        self.counters = counters
        self.seqs: list[int] = []
        self.times: list[float] = []
        self.crcs: list[int] = []
        self.cursor = 0
        self.ready = asyncio.Event()
        self.failed = False
        self.reconnects = 0
        self.heartbeats = 0
        self.stop_notices = 0
        self.retry_ms = 0

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _got(self, event: dict[str, Any], now: float) -> None:
        self.seqs.append(int(event["seq"]))
        self.times.append(now)
        self.crcs.append(digest(event))

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                if self.mode == "sse":
                    await self._stream(stop)
                else:
                    await self._poll(stop)
            except (ConnectionLost, OSError, TimeoutError) as exc:
                self.counters[f"{self.mode} lost: {type(exc).__name__}"] += 1
                self.reconnects += 1
                self.conn.close()
            except asyncio.CancelledError:
                self.conn.close()
                raise
            if not self.ready.is_set() and self.reconnects > 20:
                self.failed = True
                self.ready.set()
                return
            await asyncio.sleep(RETRY_PAUSE if self.reconnects > 1 else 0)

    async def _poll(self, stop: asyncio.Event) -> None:
        headers = self._headers("application/json")
        while not stop.is_set():
            target = f"/v1/games/{self.game}/events?after={self.cursor}&wait={POLL_WAIT}"
            answer = await asyncio.wait_for(self.conn.request("GET", target, headers), READ_TIMEOUT)
            now = time.monotonic()
            if answer.status != 200:
                self.counters[f"poll status {answer.status}"] += 1
                await asyncio.sleep(retry_after(answer.headers))
                continue
            page = orjson.loads(answer.body)
            for event in page["events"]:
                self._got(event, now)
            self.cursor = max(self.cursor, int(page["last_seq"]))
            self.ready.set()

    async def _stream(self, stop: asyncio.Event) -> None:
        headers = self._headers("text/event-stream")
        if self.seqs:
            headers["Last-Event-ID"] = str(self.seqs[-1])
        target = f"/v1/games/{self.game}/events?after=0"
        head = await asyncio.wait_for(self.conn.send("GET", target, headers), READ_TIMEOUT)
        kind = head.headers.get("content-type", "")
        if head.status != 200 or not kind.startswith("text/event-stream") or not head.chunked:
            self.counters[f"sse refused: {head.status} {kind or '-'}"] += 1
            await self.conn.body(head)
            await asyncio.sleep(retry_after(head.headers))
            return
        parser = SseParser()
        pending = b""
        chunks = self.conn.chunks()
        while not stop.is_set():
            chunk = await asyncio.wait_for(anext(chunks, None), READ_TIMEOUT)
            if chunk is None:  # as EventSource does: reconnect after the retry hint
                self.counters["sse stream ended"] += 1
                self.reconnects += 1
                self.conn.close()
                await asyncio.sleep(self.retry_ms / 1000 * random.uniform(1.0, 1.5))
                return
            now = time.monotonic()
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                for item in parser.feed(line.decode()):
                    self._item(item, now)

    def _item(self, item: Item, now: float) -> None:
        if isinstance(item, Comment):
            if item.text.startswith("keep-alive"):
                self.heartbeats += 1
            else:  # the stop notice, or why the server ended the stream
                self.stop_notices += item.text.startswith("server stopping")
                self.counters[f"sse comment: {item.text[:60]}"] += 1
        elif isinstance(item, Retry):
            self.retry_ms = item.milliseconds
            self.ready.set()
        else:
            event = orjson.loads(item.data)
            if item.id != str(event.get("seq")) or item.type != event.get("type"):
                self.counters["sse frame id/event differs from its data"] += 1
            self._got(event, now)
            self.ready.set()

    def result(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "seqs": self.seqs,
            "times": self.times,
            "crcs": self.crcs,
            "reconnects": self.reconnects,
            "heartbeats": self.heartbeats,
            "stop_notices": self.stop_notices,
            "failed": self.failed,
            "opened": self.conn.opened,
        }


def raise_fd_limit(wanted: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


async def _main(
    specs: list[dict[str, Any]],
    host: str,
    port: int,
    pipe: Pipe,
    ready_timeout: float,
    rate: float,
) -> None:
    counters: Counter[str] = Counter()
    waiters = [Waiter(spec, host, port, counters) for spec in specs]
    gate = asyncio.Semaphore(CONNECT_PARALLEL)
    tasks: list[asyncio.Task[None]] = []
    stop = asyncio.Event()

    async def start(waiter: Waiter) -> None:
        async with gate:
            tasks.append(asyncio.create_task(waiter.run(stop)))
            await waiter.ready.wait()

    async def ramp() -> None:  # ``rate`` new waiters a second, at most CONNECT_PARALLEL at once
        starting = []
        t0 = time.monotonic()
        for i, waiter in enumerate(waiters):
            await asyncio.sleep(max(0.0, t0 + i / rate - time.monotonic()))
            starting.append(asyncio.create_task(start(waiter)))
        await asyncio.gather(*starting)

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(ramp(), ready_timeout)
    ready = sum(w.ready.is_set() and not w.failed for w in waiters)
    pipe.send(("ready", ready, len(waiters) - ready, dict(counters)))
    loop = asyncio.get_running_loop()
    message: asyncio.Future[Any] = loop.create_future()
    loop.add_reader(pipe.fileno(), lambda: message.done() or message.set_result(pipe.recv()))
    _kind, targets, timeout = await message
    loop.remove_reader(pipe.fileno())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        behind = [w for w in waiters if (w.seqs[-1] if w.seqs else 0) < targets[w.index]]
        if not behind:
            break
        await asyncio.sleep(0.1)
    # wait_for (3.11) may swallow a cancellation that meets a completed read: the
    # loops check ``stop`` too, and a task that still runs is left behind
    stop.set()
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=10)
    pipe.send(("results", [w.result() for w in waiters], dict(counters)))


def waiter_process(
    specs: list[dict[str, Any]],
    host: str,
    port: int,
    pipe: Pipe,
    ready_timeout: float,
    rate: float,
) -> None:
    """Entry point of a waiter process: hold ``specs`` until told to finish.

    It reports "ready" once every waiter got its first answer, or after
    ``ready_timeout`` s with how many did (the others keep trying)."""
    raise_fd_limit(len(specs) + 256)
    asyncio.run(_main(specs, host, port, pipe, ready_timeout, rate))
    pipe.close()
