"""HTTP benchmark of the service against the ceiling of its own stack (issue 7).

One run starts a throwaway ``redis-server`` (free port, no persistence, stopped
by PID), the service under gunicorn (``deploy/gunicorn.conf.py``, ``REDIS_URL``
pointing at that Redis) and ``bench/flask_ceiling.py`` -- a plain Flask app
answering a small JSON object -- under gunicorn with the SAME settings.  Both
stay up, but only one is loaded at a time: the ceiling runs first, then each
repetition runs every service scenario followed by the ceiling again.  A
scenario's ratio is the median over repetitions of its req/s divided by the
mean req/s of the ceiling runs just before and just after it (every scenario
run sits between two ceiling runs), so the machine's drift (these are
noisy shared boxes) cancels out.

Scenarios (all on loopback, closed loop, ``--connections`` keep-alive
connections, one per load-generator thread):

* ``ceiling``       GET / of the plain Flask app;
* ``public_view``   GET /v1/games/{id}, cycling over the games;
* ``player_view``   GET /v1/games/{id}/view with a seat's bearer token;
* ``not_modified``  GET /v1/games/{id} with ``If-None-Match`` of the current version (304);
* ``moves``         POST /v1/games/{id}/moves: draw from the stock, then discard a
                    card of the deadwood the draw's answer shows (as a player
                    would; the hand's first card when it all melds), game after game.

The games are 2-player games at the start of the LAST round (13-card hands,
14 after a draw, ten rounds of results in every view): the most expensive
views the classic game has.  They are built in-process with the engine and
stored through ``GameStore.create``: copies of ``--templates`` played games,
each with a new id, new tokens and the last round dealt again from a seed of
its own, so that no two games hold the same hands.

The load generator is ``wrk`` (Debian package ``wrk``) with a Lua script; the
same wrk settings and the same script (request() and response() callbacks)
drive the ceiling, so every ratio compares like with like.  Without wrk, a
Python generator (threads, http.client keep-alive) is used for every
scenario, ceiling included; its absolute figures are lower because it
competes with the servers for the CPU.

Also measured: Redis round trips per move (INFO commandstats and INFO stats
before/after the move runs), bytes per game in Redis (MEMORY USAGE of the
state hash and event stream, 2 and 8 players at the last round), throughput
with 1,000 versus 100,000 stored games (a second Redis and a second service,
holding copies of the same 1,000 games plus 99,000 fresh 2-player games
RESTOREd next to them; the player view and moves run on both, back to back, in
every repetition), and the in-process cost of
``observe(state, seat)`` for 14-card hands.

    .venv/bin/python bench/http_bench.py [--repeats 7] [--duration 3] [--quick]

Writes bench/results/http.json; ``bench/report.py`` turns it into a chart and
a markdown table.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import http.client
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from service.api.persistence import events_payload, snapshot  # noqa: E402
from service.creation import create_record  # noqa: E402
from service.engine.moves import Discard, Draw, Source  # noqa: E402
from service.engine.shuffle import new_seed  # noqa: E402
from service.engine.solver import best_arrangement  # noqa: E402
from service.engine.state import Phase, legal_moves  # noqa: E402
from service.engine.view import observe  # noqa: E402
from service.fairplay import automatic_finish  # noqa: E402
from service.games import GameRecord  # noqa: E402
from service.store import GameStore, key  # noqa: E402
from service.store.keys import EVENTS, STATE  # noqa: E402
from service.tokens import hash_token, new_game_id, new_token  # noqa: E402

RESULTS = ROOT / "bench" / "results"
VENV_BIN = Path(sys.executable).parent

TARGETS = {"public_view": 0.60, "player_view": 0.60, "not_modified": 0.80, "moves": 0.50}
SCENARIOS = ("ceiling", "public_view", "player_view", "not_modified", "moves")
SCALE_SCENARIOS = ("player_view", "moves")  # also run against the service with --stored games
EXPECTED_STATUS = {
    "ceiling": 200,
    "public_view": 200,
    "player_view": 200,
    "not_modified": 304,
    "moves": 200,
}
MAX_ROUND_TRIPS_PER_MOVE = 2.0
MAX_SCALE_DIFF = 0.10
VIEW_COST_TARGET_MS = 1.0  # "well under a millisecond": we report the median and p99

WRK_INSTALL_HINT = (
    "wrk not found: install it with `sudo apt-get install -y wrk` (Debian/Ubuntu) for the "
    "reference figures; falling back to the Python load generator (lower absolute numbers, "
    "ratios still like with like)."
)


# --------------------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(port: int, path: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                conn.close()
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"nothing answered 200 on 127.0.0.1:{port}{path} within {timeout}s")


class Proc:
    """A child process stopped by its own PID (and its process group) on exit."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        self._log_file = open(log, "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,  # gunicorn's access log: formatted, then dropped
            stderr=self._log_file,
            start_new_session=True,
        )

    def cpu_seconds(self) -> float:
        """CPU time of this process and its children, live or reaped (gunicorn workers)."""
        tick = os.sysconf("SC_CLK_TCK")
        pids = [self.proc.pid]
        with contextlib.suppress(OSError):
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
            pids += [int(c) for c in children.split()]
        total = 0
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime
            if pid == self.proc.pid:
                total += int(fields[13]) + int(fields[14])  # reaped children
        return total / tick

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self._log_file.close()


@dataclass
class Target:
    """A server under load: its port, its gunicorn, the Redis behind it and the
    games the load cycles over (as stored in that Redis)."""

    name: str
    port: int
    server: Proc
    redis: Proc
    client: redis.Redis
    games: list[dict[str, Any]]


def start_redis(work: Path, name: str) -> tuple[Proc, int]:
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("redis-server not found on PATH (Debian: apt-get install -y redis-server)")
    port = free_port()
    proc = Proc(
        name,
        [
            exe,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(work),
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
        ],
        dict(os.environ),
        work / f"{name}.log",
    )
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or proc.proc.poll() is not None:
                raise RuntimeError(f"redis-server did not start; see {proc.log}") from None
            time.sleep(0.05)
    return proc, port


def start_gunicorn(
    name: str, app: str, port: int, redis_port: int, args: argparse.Namespace, work: Path
) -> Proc:
    env = dict(os.environ)
    env.update(
        HOST="127.0.0.1",
        PORT=str(port),
        WEB_CONCURRENCY=str(args.workers),
        GUNICORN_THREADS=str(args.threads),
        REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",  # also keeps the ceiling at N workers
        RATE_LIMITS="false",
    )
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    argv = [str(VENV_BIN / "gunicorn"), "-c", str(ROOT / "deploy" / "gunicorn.conf.py"), app]
    proc = Proc(name, argv, env, work / f"{name}.log")
    try:
        wait_http(port, "/healthz")
    except RuntimeError:
        proc.stop()
        raise RuntimeError(f"{name} did not start; see {proc.log}") from None
    return proc


# --------------------------------------------------------------------------- games


def game_at_last_round(players: int) -> tuple[GameRecord, dict[int, str], list[Any]]:
    """A fresh game played in-process (greedy players) to the start of its last round.

    A round in which the greedy players never go out is abandoned after
    ``MAX_TURNS`` turns and a new game is dealt (rare, but it must not hang).
    """
    while True:
        found = _try_last_round(players)
        if found is not None:
            return found


MAX_TURNS = 3000


def _try_last_round(players: int) -> tuple[GameRecord, dict[int, str], list[Any]] | None:
    record, tokens, events = create_record(
        [{"name": f"p{i}"} for i in range(players)], None, "classic", {}, None, False
    )
    state = record.state
    assert state is not None
    last = len(state.game.rounds)
    turns = 0
    while state.round is not None and state.spec.number < last:
        turns += 1
        if turns > MAX_TURNS:
            return None
        seat = state.round.turn
        if state.round.phase is Phase.DRAW:
            events += record.play(seat, Draw(Source.STOCK))
        else:
            events += record.play(seat, automatic_finish(state, seat))  # greedy
    assert state.round is not None and state.round.phase is Phase.DRAW
    return record, tokens, events


def clone(template: GameRecord, events: list[Any]) -> tuple[GameRecord, dict[int, str], list[Any]]:
    """A copy of ``template`` (a game at the start of a round) with a new id, new
    tokens, and that round dealt again from a seed of its own: the copies of one
    played game share its history but no hand, as unrelated games would (with
    the same hands, a worker would find most hands of a copy already solved).
    ``events`` (the template's) end with that round's deal, which is replaced."""
    record = GameRecord.from_bytes(template.to_bytes(), template.results_json())
    record.id = new_game_id()
    tokens = {}
    for seat in record.seats:
        tokens[seat.seat] = new_token()
        seat.token_hash = hash_token(tokens[seat.seat])
    state = record.state
    assert state is not None and state.round is not None and state.round.turns_taken == 0
    record.seed = state.seed = new_seed()
    dealt_at = max(i for i, e in enumerate(events) if e.type == "round_started")
    deal = state._deal(state.round.index, state.round.dealer)  # the engine's own dealing
    return record, tokens, events[:dealt_at] + deal


def create_hot_games(store: GameStore, count: int, templates: int) -> list[dict[str, Any]]:
    """``count`` 2-player games at the last round, stored through the store, each
    dealt its own hands (copies of ``templates`` played games)."""
    bases = [game_at_last_round(2) for _ in range(templates)]
    games = []
    for i in range(count):
        template, _tokens, template_events = bases[i % templates]
        record, tokens, events = clone(template, template_events)
        store.create(record.id, record.to_bytes(), events_payload(events), **snapshot(record, 1))
        games.append({"id": record.id, "n": 2, "tokens": [tokens[0], tokens[1]]})
    return games


def refresh(client: redis.Redis, games: list[dict[str, Any]]) -> None:
    """Read each game's version, turn, phase (and a card to discard) back from Redis."""
    pipe = client.pipeline(transaction=False)
    for g in games:
        pipe.hmget(key(g["id"], STATE), "v", "d", "r")
    for g, (version, doc, results) in zip(games, pipe.execute(), strict=True):
        record = GameRecord.from_bytes(doc, results)
        rnd = record.state.round if record.state else None
        g["v"] = int(version)
        g["turn"] = rnd.turn if rnd else 0
        g["phase"] = rnd.phase.value if rnd else "over"
        g["card"] = ""
        if rnd and rnd.phase is Phase.DISCARD:  # as the load generators pick it
            known = record.arrangements.get(rnd.turn)
            deadwood = known[1]["deadwood"] if known else []
            g["card"] = deadwood[0] if deadwood else rnd.hands[rnd.turn][0].code


def copy_games(
    source: redis.Redis, dest: redis.Redis, games: list[dict[str, Any]], ttl_seconds: int
) -> None:
    """Copy the games (state hash and event stream) to another Redis, as they are."""
    names = [key(g["id"], part) for g in games for part in (STATE, EVENTS)]
    for i in range(0, len(names), 500):
        batch = names[i : i + 500]
        pipe = source.pipeline(transaction=False)
        for name in batch:
            pipe.dump(name)
        dumps = pipe.execute()
        pipe = dest.pipeline(transaction=False)
        for name, dumped in zip(batch, dumps, strict=True):
            pipe.restore(name, ttl_seconds * 1000, dumped)
        pipe.execute()


def add_filler(client: redis.Redis, store: GameStore, total: int, present: int) -> int:
    """Bring the number of stored games to ``total`` with copies of one fresh 2-player game."""
    record, _tokens, events = create_record(
        [{"name": "a"}, {"name": "b"}], None, "classic", {}, None, False
    )
    store.create(record.id, record.to_bytes(), events_payload(events), **snapshot(record, 1))
    state_dump = client.dump(key(record.id, STATE))
    events_dump = client.dump(key(record.id, EVENTS))
    ttl_ms = store.game_ttl_seconds * 1000
    made = 1
    need = total - present - 1
    batch = 2000
    while made <= need:
        pipe = client.pipeline(transaction=False)
        for _ in range(min(batch, need - made + 1)):
            gid = new_game_id()
            pipe.restore(key(gid, STATE), ttl_ms, state_dump)
            pipe.restore(key(gid, EVENTS), ttl_ms, events_dump)
            made += 1
        pipe.execute()
    return made


def game_bytes(client: redis.Redis, game_id: str) -> dict[str, int]:
    state = int(client.memory_usage(key(game_id, STATE), samples=0) or 0)
    events = int(client.memory_usage(key(game_id, EVENTS), samples=0) or 0)
    return {
        "state_bytes": state,
        "events_bytes": events,
        "total_bytes": state + events,
        "events": int(client.xlen(key(game_id, EVENTS))),
        "document_bytes": len(client.hget(key(game_id, STATE), "d") or b""),
        "results_bytes": len(client.hget(key(game_id, STATE), "r") or b""),
    }


# --------------------------------------------------------------------------- in-process view cost


def view_cost(positions: int, templates: int) -> dict[str, Any]:
    """Time observe(state, seat) for the seat to discard with 14 cards (one call each)."""
    samples: dict[str, list[float]] = {"observe": [], "legal_moves": [], "arrangement": []}
    public: list[float] = []
    hand_sizes = set()
    per_template = max(1, positions // templates)
    players_cycle = (2, 4, 8)
    for t in range(templates):
        record, _tokens, _events = game_at_last_round(players_cycle[t % len(players_cycle)])
        state = record.state
        assert state is not None
        for _ in range(per_template):
            rnd = state.round
            if rnd is None:
                break
            seat = rnd.turn
            state.apply(seat, Draw(Source.STOCK))
            hand_sizes.add(len(rnd.hands[seat]))
            gc.disable()
            t0 = time.perf_counter()
            observe(state, seat)
            t1 = time.perf_counter()
            legal_moves(state, seat)
            t2 = time.perf_counter()
            best_arrangement(rnd.hands[seat], state.spec.wild_rank, state.game.options)
            t3 = time.perf_counter()
            observe(state, None)
            t4 = time.perf_counter()
            gc.enable()
            samples["observe"].append((t1 - t0) * 1000)
            samples["legal_moves"].append((t2 - t1) * 1000)
            samples["arrangement"].append((t3 - t2) * 1000)
            public.append((t4 - t3) * 1000)
            move = Discard(rnd.hands[seat][0])  # keep the round going: never go out
            state.apply(seat, move)
    out: dict[str, Any] = {"positions": len(public), "hand_sizes": sorted(hand_sizes)}
    for name, values in (*samples.items(), ("observe_public", public)):
        values.sort()
        out[name] = {
            "median_ms": statistics.median(values),
            "p99_ms": values[min(len(values) - 1, int(len(values) * 0.99))],
            "max_ms": values[-1],
        }
    return out


# --------------------------------------------------------------------------- wrk

LUA = r"""
-- Generated by bench/http_bench.py; one connection per wrk thread, so requests
-- and responses of a thread strictly alternate.
local mode = "@MODE@"
local games = dofile("@DATA@")
local counter = 0
local threads = {}

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  local nthreads = tonumber(args[1])
  mine = {}
  for i, g in ipairs(games) do
    if (i - 1) % nthreads == tid then mine[#mine + 1] = g end
  end
  cur = 1
  k = 0
  ok = 0
  bad = 0
  lost = 0
  expected = tonumber("@EXPECTED@")
  json_headers = {["Content-Type"] = "application/json"}
end

local function auth(g, seat)
  return {["Authorization"] = "Bearer " .. g.t[seat + 1], ["Content-Type"] = "application/json"}
end

function request()
  k = k + 1
  if mode == "ceiling" then
    return wrk.format("GET", "/")
  end
  local g = mine[cur]
  if mode == "public_view" then
    cur = cur % #mine + 1
    return wrk.format("GET", "/v1/games/" .. g.id)
  elseif mode == "player_view" then
    cur = cur % #mine + 1
    return wrk.format("GET", "/v1/games/" .. g.id .. "/view", auth(g, k % g.n))
  elseif mode == "not_modified" then
    cur = cur % #mine + 1
    return wrk.format("GET", "/v1/games/" .. g.id, {["If-None-Match"] = '"' .. g.v .. '"'})
  else -- moves
    if g.phase == "draw" then
      return wrk.format("POST", "/v1/games/" .. g.id .. "/moves", auth(g, g.turn),
                        '{"type":"draw","source":"stock"}')
    else
      return wrk.format("POST", "/v1/games/" .. g.id .. "/moves", auth(g, g.turn),
                        '{"type":"discard","card":"' .. g.card .. '"}')
    end
  end
end

function response(status, headers, body)
  if status == expected then ok = ok + 1 else bad = bad + 1 end
  if mode ~= "moves" then return end
  local g = mine[cur]
  if status == 200 then
    -- plain finds (memchr-fast) rather than patterns scanning the whole body:
    -- the generator's own CPU is taken from the servers on these 2-core boxes
    local at = body:find('"phase":"', 1, true)
    if body:byte(at + 10) == 105 then  -- "di(scard)", not "dr(aw)": the discard comes next
      -- a card of the arrangement's deadwood (after the hand: the results hold
      -- deadwood too), as a player would discard; the hand's first card when
      -- everything melds
      local card = body:find('"hand":["', at, true) + 9
      local dead = body:find('"deadwood":["', card, true)
      if dead then card = dead + 13 end
      g.card = body:sub(card, body:find('"', card, true) - 1)
      g.phase = "discard"
      return
    end
    local turn = body:find('"turn":', 1, true) + 7
    g.phase = "draw"
    g.turn = body:byte(turn) - 48  -- a seat is one digit (at most 8 players)
  else
    -- out of step with this game: drop it for the rest of the run
    lost = lost + 1
    table.remove(mine, cur)
    if #mine == 0 then wrk.thread:stop() return end
    cur = cur - 1
  end
  cur = cur % #mine + 1
end

function done(summary, latency, requests)
  local okc, badc, lostc = 0, 0, 0
  for _, t in ipairs(threads) do
    okc = okc + t:get("ok")
    badc = badc + t:get("bad")
    lostc = lostc + t:get("lost")
  end
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
    '"mean_us":%.1f,"ok":%d,"bad":%d,"lost_games":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.mean, okc, badc, lostc,
    e.connect + e.read + e.write + e.timeout))
end
"""


def lua_games(games: list[dict[str, Any]]) -> str:
    rows = []
    for g in games:
        toks = ",".join(f'"{t}"' for t in g["tokens"])
        rows.append(
            f'{{id="{g["id"]}",n={g["n"]},v={g.get("v", 0)},turn={g.get("turn", 0)},'
            f'phase="{g.get("phase", "draw")}",card="{g.get("card", "")}",t={{{toks}}}}}'
        )
    return "return {\n" + ",\n".join(rows) + "\n}\n"


def run_wrk(
    mode: str,
    port: int,
    games: list[dict[str, Any]],
    args: argparse.Namespace,
    work: Path,
    duration: float,
) -> dict[str, Any]:
    data = work / f"games_{mode}.lua"
    data.write_text(lua_games(games))
    script = work / f"{mode}.lua"
    script.write_text(
        LUA.replace("@MODE@", mode)
        .replace("@DATA@", str(data))
        .replace("@EXPECTED@", str(EXPECTED_STATUS[mode]))
    )
    conns = args.connections
    argv = [
        args.wrk,
        "-t",
        str(conns),
        "-c",
        str(conns),
        "-d",
        f"{duration:g}s",
        "--timeout",
        "10s",
        "-s",
        str(script),
        f"http://127.0.0.1:{port}",
        "--",
        str(conns),
    ]
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    match = re.search(r"^BENCHJSON (.*)$", out.stdout, re.MULTILINE)
    if out.returncode != 0 or match is None:
        raise RuntimeError(f"wrk failed ({out.returncode}): {out.stdout}\n{out.stderr}")
    raw = json.loads(match.group(1))
    seconds = raw["duration_us"] / 1e6
    return {
        "rps": raw["requests"] / seconds,
        "p50_ms": raw["p50_us"] / 1000,
        "p90_ms": raw["p90_us"] / 1000,
        "p99_ms": raw["p99_us"] / 1000,
        "requests": raw["requests"],
        "ok": raw["ok"],
        "bad": raw["bad"] + raw["socket_errors"],
        "lost_games": raw["lost_games"],
    }


# --------------------------------------------------------------------------- Python generator

HAND = re.compile(rb'"hand":\["([^"]+)"')
DEADWOOD = re.compile(rb'"deadwood":\["([^"]+)"')
TURN = re.compile(rb'"turn":(\d+)')
PHASE = re.compile(rb'"phase":"(\w+)"')


class PyScenario:
    """The wrk script's logic, for one Python load-generator thread."""

    def __init__(self, mode: str, mine: list[dict[str, Any]]) -> None:
        self.mode, self.mine, self.cur, self.k = mode, [dict(g) for g in mine], 0, 0

    def next(self) -> tuple[str, str, dict[str, str], bytes | None]:
        self.k += 1
        if self.mode == "ceiling":
            return "GET", "/", {}, None
        g = self.mine[self.cur]
        base = f"/v1/games/{g['id']}"
        if self.mode != "moves":
            self.cur = (self.cur + 1) % len(self.mine)
        if self.mode == "public_view":
            return "GET", base, {}, None
        if self.mode == "player_view":
            return "GET", base + "/view", self._auth(g, self.k % g["n"]), None
        if self.mode == "not_modified":
            return "GET", base, {"If-None-Match": f'"{g["v"]}"'}, None
        body = (
            b'{"type":"draw","source":"stock"}'
            if g["phase"] == "draw"
            else b'{"type":"discard","card":"' + g["card"].encode() + b'"}'
        )
        return "POST", base + "/moves", self._auth(g, g["turn"]), body

    @staticmethod
    def _auth(g: dict[str, Any], seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {g['tokens'][seat]}", "Content-Type": "application/json"}

    def on_response(self, status: int, body: bytes) -> bool:
        """Returns False when the thread has no game left."""
        if self.mode != "moves":
            return True
        g = self.mine[self.cur]
        if status == 200:
            phase = PHASE.search(body)
            if phase and phase.group(1) == b"discard":
                hand = HAND.search(body)  # as the wrk script: deadwood, after the hand
                card = DEADWOOD.search(body, hand.end()) if hand else None
                card = card or hand
                g["card"], g["phase"] = (card.group(1).decode() if card else ""), "discard"
                return True
            turn = TURN.search(body)
            g["phase"], g["turn"] = "draw", int(turn.group(1)) if turn else g["turn"]
        else:
            del self.mine[self.cur]
            if not self.mine:
                return False
            self.cur -= 1
        self.cur = (self.cur + 1) % len(self.mine)
        return True


def run_python(
    mode: str, port: int, games: list[dict[str, Any]], args: argparse.Namespace, duration: float
) -> dict[str, Any]:
    conns = args.connections
    expected = EXPECTED_STATUS[mode]
    results: list[tuple[list[float], int, int]] = []
    lock = threading.Lock()
    start_gate = threading.Barrier(conns + 1)

    def worker(index: int) -> None:
        mine = [g for i, g in enumerate(games) if i % conns == index] or games[:1]
        sc = PyScenario(mode, mine)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        lat: list[float] = []
        ok = bad = 0
        start_gate.wait()
        deadline = time.perf_counter() + duration
        while time.perf_counter() < deadline:
            method, path, headers, body = sc.next()
            t0 = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException):
                bad += 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                continue
            lat.append(time.perf_counter() - t0)
            if resp.status == expected:
                ok += 1
            else:
                bad += 1
            if not sc.on_response(resp.status, data):
                break
        conn.close()
        with lock:
            results.append((lat, ok, bad))

    workers = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(conns)]
    for w in workers:
        w.start()
    start_gate.wait()
    t0 = time.perf_counter()
    for w in workers:
        w.join()
    seconds = time.perf_counter() - t0
    lat = sorted(x for r in results for x in r[0])
    n = len(lat)

    def pct(p: float) -> float:
        return lat[min(n - 1, int(n * p))] * 1000 if n else float("nan")

    return {
        "rps": n / seconds,
        "p50_ms": pct(0.50),
        "p90_ms": pct(0.90),
        "p99_ms": pct(0.99),
        "requests": n,
        "ok": sum(r[1] for r in results),
        "bad": sum(r[2] for r in results),
        "lost_games": 0,
    }


# --------------------------------------------------------------------------- Redis statistics


def redis_counters(client: redis.Redis) -> dict[str, int]:
    info = client.info("commandstats")
    counts = {
        name.removeprefix("cmdstat_"): int(v["calls"])
        for name, v in info.items()
        if isinstance(v, dict)
    }
    stats = client.info("stats")
    counts["__reads_processed"] = int(stats["total_reads_processed"])
    return counts


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


def round_trips(total: dict[str, int], moves: int) -> dict[str, Any]:
    """Per move: every command's calls, and the client round trips.

    commandstats counts commands run inside a Lua script too.  The service
    reads with HMGET and writes with one EVALSHA of the commit script, which
    itself runs exactly one HMGET (no Idempotency-Key is sent here) plus
    XADD / HSET / EXPIRE.  So the round trips are EVALSHA + EVAL + the HMGETs
    that are not the script's own, plus any other read command.  Redis' own
    ``total_reads_processed`` (socket reads from clients) is the cross-check.
    """
    ours = ("info", "config|resetstat", "ping", "__reads_processed")
    # per connection, not per move: a recycled gunicorn worker opens new connections
    setup = ("hello", "client|setinfo", "client|setname", "select", "auth")
    cmds = {k: v for k, v in total.items() if k not in ours and k not in setup}
    scripts = cmds.get("evalsha", 0) + cmds.get("eval", 0)
    script_inner = {"hmget": scripts, "xadd": None, "hset": None, "expire": None}
    top_level = scripts
    for name, calls in cmds.items():
        if name in ("evalsha", "eval"):
            continue
        if name in script_inner:
            inner = script_inner[name]
            if inner is not None:
                top_level += max(0, calls - inner)
        else:
            top_level += calls
    reads = total.get("__reads_processed", 0)
    return {
        "moves": moves,
        "commands_per_move": {k: round(v / moves, 3) for k, v in sorted(cmds.items())},
        "round_trips_per_move": round(top_level / moves, 3) if moves else float("nan"),
        "connection_setup_commands": {k: v for k, v in total.items() if k in setup},
        "socket_reads_per_move": reads / moves if moves else float("nan"),
        "target": MAX_ROUND_TRIPS_PER_MOVE,
    }


# --------------------------------------------------------------------------- main


def server_cost(run: dict[str, Any]) -> float:
    """CPU milliseconds the servers (gunicorn and Redis) spent per request."""
    return float(run.get("server_cpu_ms", 0.0) + run.get("redis_cpu_ms", 0.0))


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "rps": statistics.median(r["rps"] for r in runs),
        "p50_ms": statistics.median(r["p50_ms"] for r in runs),
        "p99_ms": statistics.median(r["p99_ms"] for r in runs),
        "bad": sum(r["bad"] for r in runs),
        "server_cpu_ms": statistics.median(r.get("server_cpu_ms", 0.0) for r in runs),
        "redis_cpu_ms": statistics.median(r.get("redis_cpu_ms", 0.0) for r in runs),
        "requests": sum(r["requests"] for r in runs),
        "runs": runs,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--games", type=int, default=1000, help="games the load cycles over")
    parser.add_argument("--stored", type=int, default=100_000, help="stored games, scale test")
    parser.add_argument(
        "--templates", type=int, default=50, help="distinct played games (each copy redealt)"
    )
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--generator", choices=("auto", "wrk", "python"), default="auto")
    parser.add_argument("--quick", action="store_true", help="1 repeat of 2 s, 10,000 stored")
    parser.add_argument("--out", type=Path, default=RESULTS / "http.json")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.duration, args.stored = 1, 2.0, 10_000

    args.wrk = shutil.which("wrk")
    generator = args.generator
    if generator == "auto":
        generator = "wrk" if args.wrk else "python"
        if not args.wrk:
            print(WRK_INSTALL_HINT, file=sys.stderr)
    elif generator == "wrk" and not args.wrk:
        sys.exit(WRK_INSTALL_HINT.split(";")[0])

    work = RESULTS / "work"
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    procs: list[Proc] = []

    def log(msg: str) -> None:
        print(f"[{time.monotonic() - started:6.1f}s] {msg}", flush=True)

    def measure(mode: str, target: Target, seconds: float) -> Any:
        cpu0 = (target.server.cpu_seconds(), target.redis.cpu_seconds())
        if generator == "wrk":
            out = run_wrk(mode, target.port, target.games, args, work, seconds)
        else:
            out = run_python(mode, target.port, target.games, args, seconds)
        if out["requests"]:
            out["server_cpu_ms"] = (target.server.cpu_seconds() - cpu0[0]) * 1000 / out["requests"]
            out["redis_cpu_ms"] = (target.redis.cpu_seconds() - cpu0[1]) * 1000 / out["requests"]
        return out

    try:
        redis_proc, redis_port = start_redis(work, "redis")
        procs.append(redis_proc)
        client = redis.Redis(port=redis_port)
        store = GameStore(client)
        log(f"redis-server on port {redis_port} (pid {redis_proc.proc.pid})")

        # -- in-process view cost
        cost = view_cost(300, 15)
        log(
            f"observe(state, seat) with {cost['hand_sizes']}-card hands: median "
            f"{cost['observe']['median_ms']:.3f} ms, p99 {cost['observe']['p99_ms']:.3f} ms"
        )

        # -- bytes per game at the last round
        sizes = {}
        for players in (2, 8):
            record, _tokens, events = game_at_last_round(players)
            store.create(
                record.id, record.to_bytes(), events_payload(events), **snapshot(record, 1)
            )
            sizes[str(players)] = game_bytes(client, record.id)
            client.delete(key(record.id, STATE), key(record.id, EVENTS))
        log(
            f"bytes per game at the last round: { {k: v['total_bytes'] for k, v in sizes.items()} }"
        )

        # -- the games the load cycles over
        games = create_hot_games(store, args.games, args.templates)
        refresh(client, games)
        log(f"{len(games)} 2-player games at the last round stored")

        # -- a second Redis: the same games plus fresh ones up to --stored (scale check)
        large_proc, large_port = start_redis(work, "redis-large")
        procs.append(large_proc)
        large_client = redis.Redis(port=large_port)
        copy_games(client, large_client, games, store.game_ttl_seconds)
        made = add_filler(large_client, GameStore(large_client), args.stored, args.games)
        large_games = [dict(g) for g in games]
        refresh(large_client, large_games)
        keys_small, keys_large = int(client.dbsize()), int(large_client.dbsize())
        used_memory = int(large_client.info("memory")["used_memory"])
        log(
            f"second redis-server on port {large_port}: the same {len(games)} games and "
            f"{made} fresh ones, {keys_large} keys, {used_memory / 2**20:.0f} MiB used"
        )

        # -- servers
        svc_port, large_svc_port, ceil_port = free_port(), free_port(), free_port()
        app = "service.wsgi:app"
        procs.append(start_gunicorn("service", app, svc_port, redis_port, args, work))
        procs.append(start_gunicorn("service-large", app, large_svc_port, large_port, args, work))
        procs.append(
            start_gunicorn("ceiling", "bench.flask_ceiling:app", ceil_port, redis_port, args, work)
        )
        small = Target("small", svc_port, procs[-3], redis_proc, client, games)
        large = Target("large", large_svc_port, procs[-2], large_proc, large_client, large_games)
        ceiling = Target("ceiling", ceil_port, procs[-1], redis_proc, client, games)
        log(
            f"gunicorn x3 ({args.workers} workers x {args.threads} threads, gthread): service "
            f":{svc_port} ({len(games)} games stored), the same on :{large_svc_port} "
            f"({len(games) + made} games stored), ceiling :{ceil_port}; generator "
            f"{generator}, {args.connections} connections"
        )

        warm = min(2.0, args.duration)
        measure("ceiling", ceiling, warm)
        for target in (small, large):
            for mode in SCENARIOS[1:]:
                if mode in ("moves", "not_modified"):
                    refresh(target.client, target.games)
                measure(mode, target, warm)
        log("warmed up")

        modes = SCENARIOS[1:]
        runs: dict[str, list[dict[str, Any]]] = {m: [] for m in SCENARIOS}
        large_runs: dict[str, list[dict[str, Any]]] = {m: [] for m in SCALE_SCENARIOS}
        ratios: dict[str, list[float]] = {m: [] for m in modes}
        scale_diffs: dict[str, list[float]] = {m: [] for m in SCALE_SCENARIOS}
        scale_cpu_diffs: dict[str, list[float]] = {m: [] for m in SCALE_SCENARIOS}
        previous_ratios: dict[str, list[float]] = {m: [] for m in modes}
        cpu_ratios: dict[str, list[float]] = {m: [] for m in modes}
        move_counts: dict[str, int] = {}
        moves_done = 0

        def run(rep: int, mode: str, target: Target) -> dict[str, Any]:
            nonlocal moves_done
            if mode in ("moves", "not_modified"):
                refresh(target.client, target.games)
            counted = mode == "moves" and target is small  # round trips: one Redis counts
            before = redis_counters(target.client) if counted else None
            versions = sum(g["v"] for g in target.games)
            result = measure(mode, target, args.duration)
            if before is not None:
                time.sleep(0.5)  # let the requests in flight when wrk stopped land
                # read the counters before refresh(), whose own HMGETs are
                # the benchmark's, not the moves'
                after = redis_counters(target.client)
                refresh(target.client, target.games)  # moves made = versions gained
                for k, v in delta(after, before).items():
                    move_counts[k] = move_counts.get(k, 0) + v
                moves_done += sum(g["v"] for g in target.games) - versions
            (runs if target is not large else large_runs)[mode].append(result)
            where = "" if target is ceiling else f" ({target.name})"
            log(
                f"rep {rep + 1}/{args.repeats} {mode + where:21s} "
                f"{result['rps']:8.0f} req/s  p50 {result['p50_ms']:6.2f} ms  "
                f"p99 {result['p99_ms']:6.2f} ms  bad {result['bad']}  cpu/req: "
                f"gunicorn {result.get('server_cpu_ms', 0):.2f} ms, "
                f"redis {result.get('redis_cpu_ms', 0):.3f} ms"
            )
            return result

        # ceiling, scenario, ceiling, scenario, ... ceiling: each scenario run sits
        # between two ceiling runs and is compared with their mean, which cancels a
        # drift of the machine over the three runs and averages two ceiling runs.
        # The scale scenarios run twice on each service, interleaved (ABBA), and
        # the two services are compared with each other.
        before = run(0, "ceiling", ceiling)
        for rep in range(args.repeats):
            for mode in modes:
                # the scale scenarios: small, large, large, small (or the mirror on
                # odd repeats) so that a drift over the four runs cancels out
                order = [small]
                if mode in SCALE_SCENARIOS:
                    order = [small, large, large, small]
                    if rep % 2:
                        order = [large, small, small, large]
                done: dict[str, list[dict[str, Any]]] = {}
                for target in order:
                    done.setdefault(target.name, []).append(run(rep, mode, target))
                after = run(rep, "ceiling", ceiling)
                ceiling_rps = (before["rps"] + after["rps"]) / 2
                small_rps = statistics.mean(r["rps"] for r in done["small"])
                ratios[mode].append(small_rps / ceiling_rps)
                previous_ratios[mode].append(done["small"][0]["rps"] / before["rps"])
                run_cost = statistics.mean(server_cost(r) for r in done["small"])
                if run_cost:
                    ceiling_cost = (server_cost(before) + server_cost(after)) / 2
                    cpu_ratios[mode].append(ceiling_cost / run_cost)
                if "large" in done:
                    large_rps = statistics.mean(r["rps"] for r in done["large"])
                    scale_diffs[mode].append(large_rps / small_rps - 1)
                    large_cost = statistics.mean(server_cost(r) for r in done["large"])
                    if run_cost and large_cost:
                        scale_cpu_diffs[mode].append(large_cost / run_cost - 1)
                before = after
        main_results = {m: summarize(r) for m, r in runs.items()}
        main_results["ceiling"]["ratio"] = 1.0
        for mode in modes:
            res = main_results[mode]
            res["ratio"] = statistics.median(ratios[mode])
            res["ratios"] = ratios[mode]
            # for comparison with runs before the sandwich: to the ceiling before only
            res["ratio_to_previous"] = statistics.median(previous_ratios[mode])
            res["cpu_ratio"] = statistics.median(cpu_ratios[mode]) if cpu_ratios[mode] else None
        trips = round_trips(move_counts, moves_done)
        for mode, res in main_results.items():
            res["target"] = TARGETS.get(mode)
            res["pass"] = (
                None if mode == "ceiling" else (res["ratio"] >= TARGETS[mode] and res["bad"] == 0)
            )

        scale = {}
        for mode in SCALE_SCENARIOS:
            large_summary = summarize(large_runs[mode])
            diff = statistics.median(scale_diffs[mode])
            scale[mode] = {
                "rps_small": main_results[mode]["rps"],
                "rps_large": large_summary["rps"],
                # judged on the median of the paired differences: each pair ran
                # interleaved (ABBA), so the machine's drift cancels out
                "diff": diff,
                "diffs": scale_diffs[mode],
                # shown beside the verdict, not part of it: the servers' CPU per
                # request (gunicorn + Redis) on the large store over the small one,
                # median of the same pairs; steadier than req/s on a shared box
                "cpu_diff": (
                    statistics.median(scale_cpu_diffs[mode]) if scale_cpu_diffs[mode] else None
                ),
                "bad_large": large_summary["bad"],
                "pass": abs(diff) < MAX_SCALE_DIFF and large_summary["bad"] == 0,
            }
        scale_info = {
            "games_small": args.games,
            "games_large": args.games + made,
            "keys_small": keys_small,
            "keys_large": keys_large,
            "used_memory_large": used_memory,
            "large_runs": large_runs,
            "by_scenario": scale,
        }
    finally:
        for proc in reversed(procs):
            proc.stop()

    result = {
        "meta": {
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "machine": platform.node(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "generator": generator,
            "workers": args.workers,
            "threads": args.threads,
            "connections": args.connections,
            "repeats": args.repeats,
            "duration_s": args.duration,
            "games": args.games,
            "game_kind": "2 players, last round (13-card hands, 14 after a draw)",
            "elapsed_s": round(time.monotonic() - started, 1),
        },
        "scenarios": main_results,
        "round_trips": trips,
        "bytes_per_game": sizes,
        "scale": scale_info,
        "view_cost": cost,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print_table(result)
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    ok = all(r["pass"] is not False for r in main_results.values())
    ok &= trips["round_trips_per_move"] <= MAX_ROUND_TRIPS_PER_MOVE
    ok &= all(s["pass"] for s in scale.values())
    return 0 if ok else 1


def print_table(result: dict[str, Any]) -> None:
    meta = result["meta"]
    print(
        f"\nHTTP benchmark: {meta['generator']}, {meta['connections']} connections, gunicorn "
        f"{meta['workers']}x{meta['threads']} gthread, {meta['cpus']} CPUs, median of "
        f"{meta['repeats']} x {meta['duration_s']:g} s"
    )
    print(
        f"{'scenario':14s} {'req/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s} {'ratio':>7s} "
        f"{'target':>7s}  {'verdict':8s} {'by CPU':>7s}  paired ratios"
    )
    for mode, r in result["scenarios"].items():
        target = f">={r['target']:.0%}" if r["target"] else "-"
        verdict = "-" if r["pass"] is None else ("PASS" if r["pass"] else "FAIL")
        if r["bad"]:
            verdict += f" ({r['bad']} unexpected answers)"
        by_cpu = f"{r['cpu_ratio']:7.0%}" if r.get("cpu_ratio") else f"{'-':>7s}"
        paired = " ".join(f"{x:.0%}" for x in r.get("ratios", []))
        print(
            f"{mode:14s} {r['rps']:8.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} "
            f"{r['ratio']:7.0%} {target:>7s}  {verdict:8s} {by_cpu}  {paired}"
        )
    print(
        "(ratio: median of req/s over the mean req/s of the ceiling runs just before and "
        "after; by CPU: "
        "median of the ceiling's server CPU per request (gunicorn + Redis) over the "
        "scenario's -- steadier on a shared box, same pairing)"
    )
    t = result["round_trips"]
    print(
        f"\nRedis round trips per move: {t['round_trips_per_move']:.2f} (target <= "
        f"{t['target']:g}; socket reads per move {t['socket_reads_per_move']:.2f}) "
        f"{'PASS' if t['round_trips_per_move'] <= t['target'] else 'FAIL'}"
    )
    print(f"  commands per move (commandstats, Lua's own calls included): {t['commands_per_move']}")
    for players, b in result["bytes_per_game"].items():
        print(
            f"Bytes per game, {players} players, last round: {b['total_bytes']:,} "
            f"(state {b['state_bytes']:,} incl. {b['document_bytes']:,}-byte document and "
            f"{b.get('results_bytes', 0):,} bytes of results; "
            f"{b['events']} events {b['events_bytes']:,})"
        )
    s = result["scale"]
    for mode, r in s["by_scenario"].items():
        print(
            f"{s['games_small']:,} vs {s['games_large']:,} games, {mode}: {r['rps_small']:.0f} -> "
            f"{r['rps_large']:.0f} req/s (median of paired runs {r['diff']:+.1%}: "
            + " ".join(f"{d:+.0%}" for d in r["diffs"])
            + (f"; CPU per request {r['cpu_diff']:+.1%}" if r.get("cpu_diff") is not None else "")
            + ") "
            f"{'PASS' if r['pass'] else 'FAIL'}"
        )
    v = result["view_cost"]
    print(
        f"observe(state, seat), {v['hand_sizes']}-card hands, {v['positions']} positions: median "
        f"{v['observe']['median_ms']:.3f} ms, p99 {v['observe']['p99_ms']:.3f} ms "
        f"(legal_moves {v['legal_moves']['median_ms']:.3f} ms, best_arrangement "
        f"{v['arrangement']['median_ms']:.3f} ms; public view "
        f"{v['observe_public']['median_ms']:.3f} ms)"
    )


if __name__ == "__main__":
    sys.exit(main())
