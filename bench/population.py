"""Skill-based quick-join and ratings on a simulated population (issue 44's measure).

``--players`` (10,000) players of an app, each of a known hidden strength (a bot level
with noise: ``bench/_population_strength.py``), half of them playing 2-seat tables and
half 4-seat tables, quick-join in real time until ``--games`` games have started:

1. a throwaway ``redis-server``; the service's ``Config`` in ``AUTH_MODE=apps`` with
   the skill window of ``QUICKJOIN_SKILL_*`` (their defaults unless ``--window``);
   an app made as ``three-thirteen-admin apps create`` makes it, and a token minted
   for each of its players (``players.mint``, as ``POST /v1/players/{id}/tokens``);
2. the archiver (:class:`service.botplay.archiver.ArchiveWorker`) running beside, as
   in the bot worker: it archives every finished game and applies its ratings;
3. arrivals at ``--rate`` a second (a Poisson process): each picks a player at random
   among those neither waiting nor playing, who quick-joins a table of its size
   through the service's own function (:func:`service.hosting.matchmaking.quick_join`,
   with its skill window as the API builds it: ``service/api/identities.py``), from an
   address of its own (the lobby's per-address caps apply to each player alone);
4. a table that filled (round 1 dealt) is played out in a pool of ``--jobs`` processes
   and committed through the service's write loop (``bench/_population_games.py``):
   that write finishes the game and queues it for the archiver, which rates it; its
   players are free to arrive again once it is committed;
5. once the games are played, the run waits for every one to be archived and rated.

Measured: each seated player's wait (from its quick-join's call to the deal of its
table; a player still waiting at the end is counted apart), the spread of the
displayed ratings within each table when it filled (max - min of ``mu - 3 sigma``,
and of ``mu``), beside the spread of as many players of the same table size drawn at
random at that moment (random seating), and the Spearman rank correlation of the
final ratings with the hidden strength.

    .venv/bin/python bench/population.py [--players 10000] [--games 1200] [--rate 6]
        [--seating skill|fcfs] [--window base,widen,max] [--jobs 2] [--expert-samples 8]
    .venv/bin/python bench/population.py --calibrate [--calibration-deals 24]
    .venv/bin/python bench/population.py --rescore bench/results/population.json

Writes bench/results/population.json (``--calibrate``: population_calibration.json).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import queue
import random
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._population_games import play_hosted, start_worker  # noqa: E402
from bench._population_policy import Style  # noqa: E402
from bench._population_strength import (  # noqa: E402
    CALIBRATION,
    CALIBRATION_NOISES,
    NOISE_MAX,
    SHARES,
    calibrate,
    draw_population,
    hidden_strength,
    spearman,
)
from harness.redis_server import RedisServer  # noqa: E402
from service.botplay.archiver import ArchiveWorker  # noqa: E402
from service.config import Config  # noqa: E402
from service.hosting import apps, matchmaking, players  # noqa: E402
from service.hosting.ratings import Rating, current_rating  # noqa: E402
from service.hosting.record import GameRecord  # noqa: E402
from service.hosting.refusals import HostingError  # noqa: E402
from service.hosting.skill_window import SkillWindow, player_skill  # noqa: E402
from service.store import GameStore, StoreUnavailable, connect  # noqa: E402
from service.store.archives import FinishedGames  # noqa: E402

RESULTS = ROOT / "bench" / "results"
RULESET = "classic"
GAME_BUCKETS = (("1", 1, 1), ("2-3", 2, 3), (">=4", 4, 10**9))
"""The players' rated games the rank correlation is also given for."""


@dataclass(slots=True)
class Player:
    """One player of the population, and where it is in the run."""

    id: str
    style: Style
    seats: int
    strength: float
    address: str
    joined: float | None = None  # monotonic time of its quick-join, while it waits
    games: int = 0


@dataclass(slots=True)
class Run:
    """What the run measures as it goes."""

    waits: dict[int, list[float]] = field(default_factory=lambda: {2: [], 4: []})
    spread: dict[int, list[float]] = field(default_factory=lambda: {2: [], 4: []})
    spread_mu: dict[int, list[float]] = field(default_factory=lambda: {2: [], 4: []})
    random_spread: dict[int, list[float]] = field(default_factory=lambda: {2: [], 4: []})
    random_spread_mu: dict[int, list[float]] = field(default_factory=lambda: {2: [], 4: []})
    started: dict[int, int] = field(default_factory=lambda: {2: 0, 4: 0})
    joins: int = 0
    listed: int = 0
    refused: int = 0
    games: list[dict[str, Any]] = field(default_factory=list)
    backlog_max: int = 0
    join_seconds: list[float] = field(default_factory=list)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank); NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def address_of(i: int) -> str:
    return f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


class Population:
    """The app's players over one store: quick-joins, tables, ratings."""

    def __init__(
        self, store: GameStore, config: Config, count: int, seed: int, by_skill: bool = True
    ) -> None:
        self.store, self.config, self.by_skill = store, config, by_skill
        app, _key = apps.create_app_record(store.apps, "population")
        self.app = apps.load(store.apps, app.id)
        self.window = SkillWindow.of(config, self.app)
        self.players = []
        for i, (style, seats) in enumerate(draw_population(count, seed)):
            pid = f"p{i:05d}"
            players.mint(store.apps, app.id, pid, pid, 86400)
            self.players.append(Player(pid, style, seats, hidden_strength(style), address_of(i)))
        self.by_id = {p.id: p for p in self.players}
        self.groups = {n: [p for p in self.players if p.seats == n] for n in (2, 4)}
        self.idle = list(self.players)
        self.rng = random.Random(seed + 1)

    def rating(self, player: Player) -> Rating:
        return current_rating(self.store, self.app.id, RULESET, player.seats, player.id)

    def pick_idle(self) -> Player | None:
        """A player neither waiting nor playing, at random (taken out of the idle)."""
        if not self.idle:
            return None
        i = self.rng.randrange(len(self.idle))
        self.idle[i], self.idle[-1] = self.idle[-1], self.idle[i]
        return self.idle.pop()

    def quick_join(self, player: Player) -> dict[str, Any]:
        """The player's quick-join, as ``POST /v1/lobby/quick-join`` with its player
        token calls it (see ``service/api/lobby_routes.py`` and ``identities.py``)."""
        app_id = self.app.id
        body = {
            "name": player.id,
            "ruleset": RULESET,
            "options": {},
            "seats": player.seats,
            "turn_timeout_seconds": None,
            "autopilot_after_missed_turns": None,
        }
        skill = None
        if self.by_skill:
            mu = player_skill(self.store, app_id, RULESET, player.seats, player.id)
            skill = self.window.ask(player.id, mu)
        out, _last = matchmaking.quick_join(
            self.store,
            self.config,
            body,
            None,
            address=player.address,
            location=lambda game_id: f"/v1/games/{game_id}",
            app=app_id,
            holder=players.player_holder(app_id, player.id),
            player_id=player.id,
            skill=skill,
        )
        tag = players.player_tag(app_id, player.id)
        self.store.apps.note_game(tag, out["id"], self.config.game_ttl_seconds)
        return out

    def seated(self, game_id: str) -> list[Player]:
        """The players of ``game_id``, by seat."""
        found = self.store.load_game(game_id)
        assert found is not None, game_id
        record = GameRecord.loaded(found[1], found[2])
        return [self.by_id[str(seat.player_id)] for seat in record.seats]


def run_population(args: argparse.Namespace, server: RedisServer) -> dict[str, Any]:
    env = {"REDIS_URL": server.url, "AUTH_MODE": "apps", "RATE_LIMITS": "false"}
    if args.window:
        base, widen, most = args.window.split(",")
        env |= {
            "QUICKJOIN_SKILL_BASE": base,
            "QUICKJOIN_SKILL_WIDEN_PER_SECOND": widen,
            "QUICKJOIN_SKILL_MAX": most,
        }
    config = Config.from_env(env)
    store = GameStore(connect(config), config=config)
    clock = time.monotonic
    began = clock()

    def log(msg: str) -> None:
        print(f"[{clock() - began:6.1f}s] {msg}", flush=True)

    pop = Population(store, config, args.players, args.seed, args.seating == "skill")
    seating = f"window {pop.window}" if pop.by_skill else "first come, first served"
    log(f"app {pop.app.id}: {len(pop.players)} players (tokens minted); {seating}")
    archiver = ArchiveWorker(store, config).start()
    context = multiprocessing.get_context("spawn")
    pool = context.Pool(args.jobs, start_worker, (server.url, args.expert_samples))
    done: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
    failed: queue.SimpleQueue[BaseException] = queue.SimpleQueue()
    run = Run()
    playing: dict[str, tuple[list[Player], float]] = {}
    arrival_rng = random.Random(args.seed + 2)

    def collect() -> None:
        while True:
            try:
                error = failed.get_nowait()
            except queue.Empty:
                break
            raise RuntimeError(f"a game failed in the pool: {error!r}")
        while True:
            try:
                out = done.get_nowait()
            except queue.Empty:
                return
            seated, started = playing.pop(out["id"])
            out["committed_after"] = clock() - started
            out["seats"] = len(seated)
            run.games.append(out)
            for player in seated:
                player.games += 1
                pop.idle.append(player)

    def table_full(game_id: str, now: float) -> None:
        seated = pop.seated(game_id)
        n = len(seated)
        run.started[n] += 1
        for player in seated:
            assert player.joined is not None
            run.waits[n].append(now - player.joined)
            player.joined = None
        ratings = [pop.rating(p) for p in seated]
        drawn = [pop.rating(p) for p in pop.rng.sample(pop.groups[n], n)]
        for shown, mus, ratings_ in (
            (run.spread, run.spread_mu, ratings),
            (run.random_spread, run.random_spread_mu, drawn),
        ):
            shown[n].append(max(r.displayed for r in ratings_) - min(r.displayed for r in ratings_))
            mus[n].append(max(r.mu for r in ratings_) - min(r.mu for r in ratings_))
        playing[game_id] = (seated, clock())
        styles = [p.style.to_list() for p in seated]
        pool.apply_async(
            play_hosted, ((game_id, styles),), callback=done.put, error_callback=failed.put
        )
        run.backlog_max = max(run.backlog_max, len(playing))

    target = args.games
    next_arrival = clock()
    last_report = clock()
    try:
        while sum(run.started.values()) < target:
            collect()
            now = clock()
            if now - last_report >= 30:
                last_report = now
                log(
                    f"started {run.started[2]} 2-seat + {run.started[4]} 4-seat games, "
                    f"{len(run.games)} played, {len(playing)} in play, "
                    f"{sum(p.joined is not None for p in pop.players)} waiting"
                )
            if now < next_arrival:
                time.sleep(min(next_arrival - now, 0.005))
                continue
            next_arrival += arrival_rng.expovariate(args.rate)
            player = pop.pick_idle()
            if player is None:
                continue
            player.joined = now
            try:
                out = pop.quick_join(player)
            except (HostingError, StoreUnavailable):
                run.refused += 1
                player.joined = None
                pop.idle.append(player)
                continue
            run.join_seconds.append(clock() - now)
            run.joins += 1
            run.listed += int(out["created"])
            if out["status"] != "waiting":
                table_full(out["id"], clock())
        arrivals_seconds = clock() - began
        log(f"{target} games started; waiting for the pool to play them")
        while playing:
            collect()
            time.sleep(0.05)
            if clock() - last_report >= 30:
                last_report = clock()
                log(f"{len(run.games)} played, {len(playing)} in play")
        log(f"{len(run.games)} games played; waiting for the archiver to rate them")
        finished = FinishedGames(store.client)
        for game in run.games:
            while finished.queued(game["id"]) is not None or not store.archives.load(game["id"]):
                time.sleep(0.05)
        log("every game archived and rated")
    finally:
        pool.terminate()
        pool.join()
        archiver.stop()
    return summarize(args, pop, run, clock() - began, arrivals_seconds)


def rho(selected: list[Player], final: dict[str, Rating], attr: str) -> float:
    """Spearman's correlation of ``selected``'s hidden strength with their final
    ratings' ``attr`` (``displayed`` or ``mu``)."""
    values = [getattr(final[p.id], attr) for p in selected]
    return spearman([p.strength for p in selected], values)


def summarize(
    args: argparse.Namespace, pop: Population, run: Run, seconds: float, arrivals: float
) -> dict[str, Any]:
    final = {p.id: pop.rating(p) for p in pop.players if p.games > 0}
    rows = [
        [p.id, p.style.level, p.style.noise, p.seats, p.games, final[p.id].mu, final[p.id].sigma]
        for p in pop.players
        if p.games > 0
    ]
    tables: dict[str, Any] = {}
    for n in (2, 4):
        group = pop.groups[n]
        played = [p for p in group if p.games > 0]
        strength = [p.strength for p in played]
        by_games = {}
        for label, low, high in GAME_BUCKETS:
            chosen = [p for p in played if low <= p.games <= high]
            by_games[label] = {
                "players": len(chosen),
                "spearman_displayed": rho(chosen, final, "displayed"),
                "spearman_mu": rho(chosen, final, "mu"),
            }
        games = [g for g in run.games if g["seats"] == n]
        tables[str(n)] = {
            "games": run.started[n],
            "seated": len(run.waits[n]),
            "still_waiting": sum(p.joined is not None for p in group),
            "wait_median_s": statistics.median(run.waits[n]) if run.waits[n] else math.nan,
            "wait_p95_s": percentile(run.waits[n], 0.95),
            "wait_max_s": max(run.waits[n], default=math.nan),
            "spread_displayed_mean": statistics.fmean(run.spread[n]) if run.spread[n] else math.nan,
            "spread_displayed_random": statistics.fmean(run.random_spread[n])
            if run.random_spread[n]
            else math.nan,
            "spread_mu_mean": statistics.fmean(run.spread_mu[n]) if run.spread_mu[n] else math.nan,
            "spread_mu_random": statistics.fmean(run.random_spread_mu[n])
            if run.random_spread_mu[n]
            else math.nan,
            "players": len(group),
            "players_rated": len(played),
            "games_per_rated_player": statistics.fmean(p.games for p in played) if played else 0,
            "spearman_displayed": spearman(strength, [final[p.id].displayed for p in played]),
            "spearman_mu": spearman(strength, [final[p.id].mu for p in played]),
            "by_games": by_games,
            "play_seconds_median": statistics.median(g["play_seconds"] for g in games)
            if games
            else math.nan,
            "commit_after_p95_s": percentile([g["committed_after"] for g in games], 0.95),
        }
    return {
        "meta": {
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "machine": platform.node(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "players": args.players,
            "games": args.games,
            "rate_per_s": args.rate,
            "jobs": args.jobs,
            "expert_samples": args.expert_samples,
            "seed": args.seed,
            "seating": args.seating,
            "window": {
                "base": pop.window.base,
                "widen_per_second": pop.window.widen,
                "max": pop.window.most,
            },
            "shares": SHARES,
            "noise_max": NOISE_MAX,
            "calibration": {"noises": CALIBRATION_NOISES, "points": CALIBRATION},
        },
        "seconds": seconds,
        "arrivals_seconds": arrivals,
        "joins": run.joins,
        "tables_listed": run.listed,
        "refused": run.refused,
        "join_median_ms": 1000 * statistics.median(run.join_seconds) if run.join_seconds else 0,
        "join_p95_ms": 1000 * percentile(run.join_seconds, 0.95),
        "backlog_max": run.backlog_max,
        "games_played": len(run.games),
        "tables": tables,
        "rated_players": rows,
    }


def rescore(result: dict[str, Any]) -> None:
    """Recompute ``result``'s rank correlations with the hidden strength of the
    current :data:`CALIBRATION` (after a new ``--calibrate``), in place."""
    rated = [
        (
            Player(pid, Style(level, noise), seats, hidden_strength(Style(level, noise)), ""),
            Rating(mu, sigma, games),
        )
        for pid, level, noise, seats, games, mu, sigma in result["rated_players"]
    ]
    for pl, rating in rated:
        pl.games = rating.games
    final = {pl.id: rating for pl, rating in rated}
    for n, table in result["tables"].items():
        played = [pl for pl, _r in rated if pl.seats == int(n)]
        table["spearman_displayed"] = rho(played, final, "displayed")
        table["spearman_mu"] = rho(played, final, "mu")
        for label, low, high in GAME_BUCKETS:
            chosen = [pl for pl in played if low <= pl.games <= high]
            table["by_games"][label] |= {
                "players": len(chosen),
                "spearman_displayed": rho(chosen, final, "displayed"),
                "spearman_mu": rho(chosen, final, "mu"),
            }
    result["meta"]["calibration"] = {"noises": CALIBRATION_NOISES, "points": CALIBRATION}


def print_summary(result: dict[str, Any]) -> None:
    meta = result["meta"]
    print(
        f"\n{meta['players']} players, {result['games_played']} games in "
        f"{result['seconds']:.0f} s ({result['arrivals_seconds']:.0f} s of arrivals at "
        f"{meta['rate_per_s']}/s); seating {meta['seating']}, window {meta['window']}; "
        "quick-join "
        f"p50 {result['join_median_ms']:.1f} ms, p95 {result['join_p95_ms']:.1f} ms; "
        f"{result['refused']} refused"
    )
    print(
        f"{'seats':>5} {'games':>6} {'wait p50':>9} {'p95':>7} {'waiting':>8} "
        f"{'spread':>7} {'random':>7} {'mu sprd':>8} {'random':>7} {'rated':>6} "
        f"{'g/pl':>5} {'rho disp':>9} {'rho mu':>7}"
    )
    for n, t in result["tables"].items():
        print(
            f"{n:>5} {t['games']:>6} {t['wait_median_s']:>8.2f}s {t['wait_p95_s']:>6.2f}s "
            f"{t['still_waiting']:>8} {t['spread_displayed_mean']:>7.2f} "
            f"{t['spread_displayed_random']:>7.2f} {t['spread_mu_mean']:>8.2f} "
            f"{t['spread_mu_random']:>7.2f} {t['players_rated']:>6} "
            f"{t['games_per_rated_player']:>5.2f} {t['spearman_displayed']:>9.3f} "
            f"{t['spearman_mu']:>7.3f}"
        )
        for label, b in t["by_games"].items():
            print(
                f"      players with {label:>3} games: {b['players']:>5}  "
                f"rho displayed {b['spearman_displayed']:.3f}  rho mu {b['spearman_mu']:.3f}"
            )


def print_calibration(result: dict[str, Any]) -> None:
    print(f"\ncalibration: {result['deals']} deals x 2 seats against basic without noise")
    print(f"{'level':>7} {'noise':>6} {'points/game':>12} {'win rate':>9}")
    for row in result["points"]:
        print(
            f"{row['level']:>7} {row['noise']:>6.2f} {row['points']:>+7.1f} ± {row['ci95']:<4.1f}"
            f" {100 * row['win_rate']:>8.1f}%"
        )
    print("neighbours (stronger - weaker, points per game, paired over deals):")
    for step in result["steps"]:
        a, b = step["stronger"], step["weaker"]
        low, high = step["points"] - step["ci95"], step["points"] + step["ci95"]
        mark = "ok" if low > 0 else "reversed" if high < 0 else "apart within the interval"
        print(
            f"  {a[0]} {a[1]:.2f} - {b[0]} {b[1]:.2f}: {step['points']:+.1f} ± "
            f"{step['ci95']:.1f}  {mark}"
        )
    print(f"CALIBRATION table: {json.dumps(result['table'])}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--games", type=int, default=1200, help="games started, both sizes")
    parser.add_argument("--rate", type=float, default=6.0, help="arrivals a second")
    parser.add_argument("--jobs", type=int, default=2, help="processes playing the games")
    parser.add_argument("--expert-samples", type=int, default=8, help="the expert's samples")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument(
        "--window", default="", help="base,widen_per_second,max (default: the configuration's)"
    )
    parser.add_argument(
        "--seating",
        choices=("skill", "fcfs"),
        default="skill",
        help="skill: the players' skill windows; fcfs: first come, first served (no skill)",
    )
    parser.add_argument("--calibrate", action="store_true", help="measure the strength scale")
    parser.add_argument("--calibration-deals", type=int, default=24)
    parser.add_argument(
        "--rescore",
        type=Path,
        default=None,
        help="a population.json: its rank correlations again, with the current CALIBRATION",
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the pool and Redis
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.rescore is not None:
        result = json.loads(args.rescore.read_text())
        rescore(result)
        print_summary(result)
        args.rescore.write_text(json.dumps(result, indent=2))
        print(f"rewrote {args.rescore}")
        return 0
    if args.calibrate:
        began = time.monotonic()
        result = calibrate(args.calibration_deals, args.jobs, args.expert_samples)
        result["seconds"] = time.monotonic() - began
        print_calibration(result)
        out = args.out or RESULTS / "population_calibration.json"
    else:
        with RedisServer() as server:
            result = run_population(args, server)
        print_summary(result)
        out = args.out or RESULTS / "population.json"
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
