"""Local simulator: bot-only games played with the engine directly (no HTTP).

    three-thirteen-sim --players strong,basic,random --games 100 --seed 7 \\
        --ruleset classic --option extra_rounds=1 --jobs 2

Games are played in the duplicate format of bridge tournaments: each deal
(a seed derived from ``--seed`` and the deal's number; it fixes the dealer and
every round's shuffle) is played once per rotation of the levels around the
table, so every level holds every seat's cards of every deal and the luck of
the cards cancels out of the comparison.  Every bot decides from its own seat's
view (:func:`service.engine.view.observe`) plus the game's public events so far.
The summary gives, per level, the mean total per game with a 95% confidence
interval taken over deals (the games of one deal are not independent), and the
win rate per game (a shared win counts for every winner).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from service import bots
from service.bots import expert
from service.bots.turn_rng import turn_rng
from service.engine.game_events import Event
from service.engine.moves import Move
from service.engine.options import Options, preset
from service.engine.rules import Game
from service.engine.shuffle import Shuffler, seed_from_client
from service.engine.state import State
from service.engine.view import observe

Timer = Callable[[str, int, float], None]  # (level, hand size, seconds)


@dataclass(slots=True)
class SimulatedGame:
    """One finished game: the level at each seat, the totals and the winners."""

    levels: tuple[str, ...]
    totals: list[int]
    winners: list[int]
    decision_times: list[tuple[str, int, float]] = field(default_factory=list)
    deal: int = 0  # games of one deal share their cards (duplicate format)


def public_events(events: list[Event]) -> list[dict[str, Any]]:
    """The public ``events`` as the events endpoint shows them (a bot's history)."""
    return [e.to_dict() for e in events if e.is_public]


def play_game(
    levels: Sequence[str],
    options: Options,
    seed: str,
    *,
    history: bool = True,
    timed: bool = False,
) -> SimulatedGame:
    """Play one game between bots of ``levels`` (seat order); ``seed`` is hex."""
    game = Game(len(levels), options)
    state, events = State.start(game, seed)
    public = public_events(events)
    shuffler = Shuffler.from_hex(seed)
    times: list[tuple[str, int, float]] = []
    while state.round is not None:
        seat = state.round.turn
        view = observe(state, seat)
        rng = turn_rng(shuffler, state)
        level = levels[seat]
        start = time.perf_counter()
        move: Move = bots.decide(level, view, rng, public if history else None)
        if timed:
            times.append((level, len(view["hand"]), time.perf_counter() - start))
        public.extend(public_events(state.apply(seat, move)))
    return SimulatedGame(tuple(levels), list(state.totals), list(state.winners), times)


def game_seed(seed: str | int, index: int) -> str:
    """The hex seed of game ``index`` of a run seeded with ``seed``."""
    return seed_from_client(f"{seed}:{index}")


def seating(levels: Sequence[str], index: int) -> tuple[str, ...]:
    """The levels rotated by the game number, so every level visits every seat."""
    k = index % len(levels)
    return tuple(levels[k:]) + tuple(levels[:k])


def _play_one(job: tuple[tuple[str, ...], Options, str, bool, int, int]) -> SimulatedGame:
    levels, options, seed, timed, deal, samples = job
    expert.use_samples(samples)  # a spawned worker starts from the default
    outcome = play_game(levels, options, seed, timed=timed)
    outcome.deal = deal
    return outcome


def run_games(
    levels: Sequence[str],
    options: Options,
    games: int,
    seed: str | int,
    *,
    jobs: int = 1,
    timed: bool = False,
) -> Iterator[SimulatedGame]:
    """Play ``games`` games, yielding outcomes as they finish (in game order).

    Game ``i`` plays deal ``i // len(levels)`` with the levels rotated by
    ``i % len(levels)``: a full set of games per deal when ``games`` is a
    multiple of the number of seats."""
    n = len(levels)
    work = [
        (seating(levels, i % n), options, game_seed(seed, i // n), timed, i // n, expert.samples())
        for i in range(games)
    ]
    if jobs <= 1:
        for job in work:
            yield _play_one(job)
        return
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        yield from pool.imap(_play_one, work)


@dataclass(slots=True)
class LevelStats:
    level: str
    games: int
    mean: float
    ci95: float
    wins: int
    seats: int
    deals: int

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0


def _per_deal(outcomes: Sequence[SimulatedGame], level: str) -> dict[int, float]:
    """Per deal, the mean total of ``level``'s seats over that deal's games."""
    sums: dict[int, list[float]] = {}
    for out in outcomes:
        totals = [t for t, lv in zip(out.totals, out.levels, strict=True) if lv == level]
        if totals:
            sums.setdefault(out.deal, []).append(sum(totals) / len(totals))
    return {deal: statistics.fmean(values) for deal, values in sums.items()}


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and 95% confidence half-width (normal approximation)."""
    n = len(values)
    sd = statistics.stdev(values) if n > 1 else 0.0
    return statistics.fmean(values), 1.96 * sd / math.sqrt(n)


def summarize(outcomes: Sequence[SimulatedGame]) -> list[LevelStats]:
    """Per level: mean total per game (seats of one level averaged within a game),
    its 95% confidence interval over deals, and the number of games the level won."""
    games: dict[str, int] = {}
    wins: dict[str, int] = {}
    seats: dict[str, int] = {}
    for out in outcomes:
        for level in set(out.levels):
            games[level] = games.get(level, 0) + 1
            seats[level] = out.levels.count(level)
            won = any(out.levels[w] == level for w in out.winners)
            wins[level] = wins.get(level, 0) + int(won)
    rows = []
    for level in games:
        by_deal = _per_deal(outcomes, level)
        mean, ci = mean_ci(list(by_deal.values()))
        rows.append(
            LevelStats(level, games[level], mean, ci, wins[level], seats[level], len(by_deal))
        )
    rows.sort(key=lambda r: r.mean)
    return rows


def paired_difference(outcomes: Sequence[SimulatedGame], a: str, b: str) -> tuple[float, float]:
    """Mean and 95% CI half-width of (mean total of ``a`` - mean total of ``b``)
    per deal."""
    da, db = _per_deal(outcomes, a), _per_deal(outcomes, b)
    return mean_ci([da[deal] - db[deal] for deal in da if deal in db])


def format_table(rows: Sequence[LevelStats]) -> str:
    """A Markdown table of :func:`summarize` rows."""
    lines = [
        "| level | seats | games | deals | mean total ± 95% CI | win rate |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.level} | {r.seats} | {r.games} | {r.deals} | {r.mean:.1f} ± {r.ci95:.1f} | "
            f"{100 * r.win_rate:.1f}% ({r.wins}) |"
        )
    return "\n".join(lines)


def _option_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_options(ruleset: str, pairs: Sequence[str]) -> Options:
    """Options of ``ruleset`` with ``key=value`` overrides (values read as JSON)."""
    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--option expects key=value, got {pair!r}")
        overrides[key.strip()] = _option_value(value.strip())
    return Options.from_dict(overrides, base=preset(ruleset))


class _Progress:
    """A rich progress bar when rich is installed, else a line every 10%."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.done, self.quiet = total, 0, quiet
        self._bar: Any = None
        if quiet:
            return
        try:
            from rich.progress import Progress
        except ImportError:
            return
        self._bar = Progress(transient=True)
        self._task = self._bar.add_task("games", total=total)
        self._bar.start()

    def advance(self) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1)
        elif not self.quiet:
            step = max(1, self.total // 10)
            if self.done % step == 0 or self.done == self.total:
                print(f"  {self.done}/{self.total} games", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="three-thirteen-sim", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--players", default="strong,basic", help="comma-separated bot levels, one per seat"
    )
    parser.add_argument("--games", type=int, default=20, help="number of games")
    parser.add_argument("--seed", default="0", help="seed of the run (any text)")
    parser.add_argument("--ruleset", default="classic", help="preset name")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="option override (repeatable)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument(
        "--expert-samples",
        type=int,
        default=None,
        help="the expert level's samples per decision (default: BOT_EXPERT_SAMPLES's default)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    levels = [p.strip() for p in args.players.split(",") if p.strip()]
    unknown = [lv for lv in levels if lv not in bots.LEVELS]
    if unknown:
        print(
            f"unknown level {unknown[0]!r}; expected one of {', '.join(bots.LEVELS)}",
            file=sys.stderr,
        )
        return 2
    try:
        options = parse_options(args.ruleset, args.option)
        Game(len(levels), options)
    except Exception as exc:  # noqa: BLE001 - shown to the user as is
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.games < 1:
        print("error: --games must be at least 1", file=sys.stderr)
        return 2
    if args.expert_samples is not None:
        try:
            expert.use_samples(args.expert_samples)
        except ValueError as exc:
            print(f"error: --expert-samples: {exc}", file=sys.stderr)
            return 2
    started = time.perf_counter()
    progress = _Progress(args.games, args.quiet)
    outcomes = []
    try:
        for outcome in run_games(levels, options, args.games, args.seed, jobs=args.jobs):
            outcomes.append(outcome)
            progress.advance()
    finally:
        progress.close()
    elapsed = time.perf_counter() - started
    print(
        f"{args.games} games, players {','.join(levels)}, "
        f"ruleset {args.ruleset}, seed {args.seed!r}"
    )
    print(format_table(summarize(outcomes)))
    print(f"time: {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
