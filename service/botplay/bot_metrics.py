"""A bot worker's metrics: how late it takes due games, how long it plays them, and
what it writes.

Served by the worker's process on ``WORKER_METRICS_PORT`` (``/metrics``, Prometheus'
text format; :func:`service.workers.process.serve`), each worker's own, from a
registry of its own: the API's ``/metrics`` counts what requests do, this what the
workers do between requests -- moves of bots and of turn timers, and the games they
finish (``t13_games_finished_total`` on the API counts only those a client's move
finished).  The lateness is the one figure to size bot workers by: a worker that
keeps up claims a game within milliseconds of its due time; a growing tail means
more worker processes (docs/PRODUCTION.md).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

OUTCOMES = ("written", "nothing", "failed")
"""What a claim came to: a write; nothing due (or another write came first); an error
(the claim is kept until its lease ends, then retried)."""

SECONDS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class BotMetrics:
    """The metrics of one bot worker, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.claims = Counter(
            "t13_bot_claims_total",
            "Due games claimed by this bot worker, by what the claim came to",
            ["outcome"],
            registry=self.registry,
        )
        self.moves = Counter(
            "t13_bot_moves_total",
            "Moves written for seats: bots', autopilot's and the automatic moves of timers",
            registry=self.registry,
        )
        self.games_finished = Counter(
            "t13_bot_games_finished_total",
            "Games finished by a move this bot worker wrote",
            registry=self.registry,
        )
        self.lateness = Histogram(
            "t13_bot_due_lateness_seconds",
            "From the time a game's turn fell due to its claim by this worker",
            buckets=SECONDS_BUCKETS,
            registry=self.registry,
        )
        self.play_seconds = Histogram(
            "t13_bot_play_seconds",
            "Time to play one claim: a stretch of bot moves or a timer's move, and its write",
            buckets=SECONDS_BUCKETS,
            registry=self.registry,
        )
        for outcome in OUTCOMES:
            self.claims.labels(outcome)  # every outcome shown from the start, at 0
