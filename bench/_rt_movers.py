"""The players of the real-time benchmark: they create the games and make the moves.

:class:`Movers` creates games over HTTP (``POST /v1/games``, no bots) and then
plays ``rate`` moves per second across them, open loop: a tick every
``1 / rate`` s starts a move on the next game that has no move in flight
(round robin; a tick that finds none is counted as skipped).  A move is a
legal move of the seat to play, taken from that seat's view: go out when
``legal_moves`` offers it, else draw from the stock, else discard the first
card of the arrangement's deadwood.  The move's answer is the mover's new view;
when the turn passed to another seat, that seat's view is read with its token
(``GET /view``: the "reads" of the figures).  Every move's answer time
(``time.monotonic()``, when its 200 was read) is kept per game, in order, for
the delivery latency; a ``GET /readyz`` probe runs beside.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from bench._rt_http import Connection, ConnectionLost, Response

JSON = {"Content-Type": "application/json", "Accept": "application/json"}
PROBE_EVERY = 0.2


@dataclass
class Game:
    id: str
    tokens: list[str]
    view: dict[str, Any] = field(default_factory=dict)
    busy: bool = False
    finished: bool = False
    moves: list[tuple[float, str]] = field(default_factory=list)
    """(monotonic time its 200 was read, move type) of every move that got a 200, in order."""
    failed_moves: int = 0


def choose(view: dict[str, Any]) -> dict[str, Any] | None:
    """A legal move for the seat whose view this is (None: it has none)."""
    legal = view.get("legal_moves") or []
    if not legal:
        return None
    for move in legal:
        if move["type"] == "go_out":
            return dict(move)
    draws = [m for m in legal if m["type"] == "draw"]
    if draws:
        return next((m for m in draws if m["source"] == "stock"), draws[0])
    deadwood = set((view.get("arrangement") or {}).get("deadwood") or ())
    discards = [m for m in legal if m["type"] == "discard"]
    return next((m for m in discards if m["card"] in deadwood), discards[0])


class Movers:
    def __init__(self, host: str, port: int, rate: float, pool: int = 64) -> None:
        self.host, self.port, self.rate = host, port, rate
        self._idle: asyncio.Queue[Connection] = asyncio.Queue()
        for _ in range(pool):
            self._idle.put_nowait(Connection(host, port))
        self.samples: dict[str, list[float]] = {"move": [], "read": [], "probe": []}
        self.errors: Counter[str] = Counter()
        self.started = self.skipped = 0
        self.measuring = False

    @contextlib.asynccontextmanager
    async def _conn(self) -> AsyncIterator[Connection]:
        conn = await self._idle.get()
        try:
            yield conn
        finally:
            self._idle.put_nowait(conn)

    async def call(
        self, method: str, path: str, token: str | None = None, body: Any = None
    ) -> tuple[Response, float]:
        """One request on a pooled connection (retried once on a lost keep-alive connection)."""
        headers = dict(JSON)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else orjson.dumps(body)
        async with self._conn() as conn:
            for attempt in (1, 2):
                t0 = time.monotonic()
                try:
                    answer = await asyncio.wait_for(conn.request(method, path, headers, data), 30)
                    return answer, (time.monotonic() - t0) * 1000
                except (ConnectionLost, OSError, TimeoutError) as exc:
                    conn.close()
                    self.errors[f"{method} lost: {type(exc).__name__}"] += 1
                    if attempt == 2 or method == "POST":  # a POST may have acted: not repeated
                        raise
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ games

    async def create_games(self, count: int, players: int, parallel: int = 16) -> list[Game]:
        games: list[Game] = []
        gate = asyncio.Semaphore(parallel)

        async def one(i: int) -> None:
            async with gate:
                body = {"players": [{"name": f"p{s}"} for s in range(players)]}
                answer, _ = await self.call("POST", "/v1/games", body=body)
                if answer.status != 201:
                    raise RuntimeError(f"create: {answer.status} {answer.body[:300]!r}")
                created = orjson.loads(answer.body)
                game = Game(created["id"], [p["token"] for p in created["players"]])
                await self._resync(game)
                games.append(game)

        await asyncio.gather(*(one(i) for i in range(count)))
        return games

    async def _resync(self, game: Game) -> None:
        """Read the view of the seat to play (after a create or an unexpected answer)."""
        game.view = {}
        answer, _ = await self.call("GET", f"/v1/games/{game.id}")
        if answer.status != 200:
            self.errors[f"public view {answer.status}"] += 1
            return
        public = orjson.loads(answer.body)
        if public.get("status") == "finished" or not public.get("round"):
            game.finished = True
            return
        seat = public["round"]["turn"]
        answer, _ = await self.call("GET", f"/v1/games/{game.id}/view", game.tokens[seat])
        if answer.status != 200:
            self.errors[f"view {answer.status}"] += 1
            return
        game.view = orjson.loads(answer.body)

    # ------------------------------------------------------------------ moves

    async def _step(self, game: Game) -> None:
        game.busy = True
        try:
            view = game.view
            move = choose(view) if "seat" in view else None
            if move is None:
                self.errors["no view, or no legal move in it"] += 1
                await self._resync(game)
                return
            seat = view["seat"]
            path = f"/v1/games/{game.id}/moves"
            answer, ms = await self.call("POST", path, game.tokens[seat], move)
            if answer.status != 200:
                game.failed_moves += 1
                self.errors[f"move {answer.status} {answer.body[:80]!r}"] += 1
                await self._resync(game)
                return
            game.moves.append((time.monotonic(), move["type"]))
            if self.measuring:
                self.samples["move"].append(ms)
            view = orjson.loads(answer.body)
            if view.get("status") == "finished" or not view.get("round"):
                game.finished = True
                return
            turn = view["round"]["turn"]
            if turn != seat:
                answer, ms = await self.call("GET", f"/v1/games/{game.id}/view", game.tokens[turn])
                if answer.status != 200:
                    self.errors[f"view {answer.status}"] += 1
                    await self._resync(game)
                    return
                if self.measuring:
                    self.samples["read"].append(ms)
                view = orjson.loads(answer.body)
            game.view = view
        except (ConnectionLost, OSError, TimeoutError) as exc:
            game.failed_moves += 1
            self.errors[f"move lost: {type(exc).__name__}"] += 1
            with contextlib.suppress(ConnectionLost, OSError, TimeoutError):
                await self._resync(game)
        finally:
            game.busy = False

    async def play(self, games: list[Game], seconds: float) -> None:
        """Start ``rate`` moves a second across ``games`` for ``seconds``, then let them finish."""
        tasks: set[asyncio.Task[None]] = set()
        cursor = 0
        t0 = time.monotonic()
        done = 0
        while (now := time.monotonic()) - t0 < seconds:
            due = int((now - t0) * self.rate) - done
            for _ in range(due):
                done += 1
                for _attempt in range(len(games)):
                    game = games[cursor]
                    cursor = (cursor + 1) % len(games)
                    if not game.busy and not game.finished:
                        task = asyncio.create_task(self._step(game))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                        self.started += 1
                        break
                else:
                    self.skipped += 1
            await asyncio.sleep(min(0.005, 1 / self.rate))
        if tasks:
            await asyncio.gather(*tasks)

    async def probe(self, stop: asyncio.Event) -> None:
        """``GET /readyz`` every PROBE_EVERY s until ``stop`` (its own connection)."""
        conn = Connection(self.host, self.port)
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                answer = await asyncio.wait_for(conn.request("GET", "/readyz"), 30)
                if answer.status != 200:
                    self.errors[f"readyz {answer.status}"] += 1
                self.samples["probe"].append((time.monotonic() - t0) * 1000)
            except (ConnectionLost, OSError, TimeoutError) as exc:
                conn.close()
                self.errors[f"readyz lost: {type(exc).__name__}"] += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), PROBE_EVERY)
        conn.close()
