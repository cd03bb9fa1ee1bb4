"""The population's games, played in worker processes and committed to the service.

A table that filled (every seat quick-joined, round 1 dealt) is handed to a process of
a pool (:func:`play_hosted`): it reads the game through the service's write loop
(:func:`service.hosting.write_loop.optimistic_write`), plays it to its end with the
seated players' styles (:func:`bench._population_policy.play_out`), each move applied
by the hosted game's own operation (:meth:`service.hosting.record.GameRecord.play`),
and commits the finished game in that one write: its events, its views, its results.
That write is the one that finishes it, so it queues the game for the archiver, which
archives it and rates it (:func:`service.hosting.archiving.archive_game`), as for
any game.  One write per game, not one per move: a move's own cost over HTTP is
``make bench-http``'s; here the thousands of games are what is measured.
"""

from __future__ import annotations

import time
from typing import Any

from bench._population_policy import Style, play_out
from service.bots import expert
from service.config import Config
from service.engine.game_events import Event
from service.engine.moves import Move
from service.hosting.record import GameRecord
from service.hosting.snapshots import snapshot
from service.hosting.write_loop import Write, optimistic_write, public_events
from service.store import GameStore, connect

_store: GameStore | None = None
_config: Config | None = None


def start_worker(redis_url: str, expert_samples: int) -> None:
    """A pool process's start: its own store (one connection) and the expert's samples."""
    global _store, _config
    _config = Config.from_env({"REDIS_URL": redis_url, "AUTH_MODE": "apps"})
    _store = GameStore(connect(_config), config=_config)
    expert.use_samples(expert_samples)


def play_hosted(job: tuple[str, list[list[Any]]]) -> dict[str, Any]:
    """Play the started game ``job[0]`` to its end, seat ``i`` in style ``job[1][i]``
    (``[level, noise]``), and commit it: its id, totals, winners, moves and the
    seconds it took (play, and the whole write)."""
    game_id, raw_styles = job
    store, config = _store, _config
    assert store is not None and config is not None, "start_worker first"
    styles = [Style(level, noise) for level, noise in raw_styles]
    started = time.perf_counter()
    timings: dict[str, float] = {}

    def step(version: int, record: GameRecord) -> tuple[Write, dict[str, Any]]:
        state = record.state
        assert state is not None, f"game {game_id} has not started"
        begun = time.perf_counter()
        history = public_events(store, game_id)
        moves = 0

        def apply(seat: int, move: Move) -> list[Event]:
            nonlocal moves
            moves += 1
            return record.play(seat, move)

        events = play_out(state, record.seed, styles, apply, history)
        timings["play"] = time.perf_counter() - begun
        out = {
            "id": game_id,
            "totals": list(state.totals),
            "winners": list(state.winners),
            "moves": moves,
        }
        return Write(events, snapshot(record, version + 1)), out

    out, _last = optimistic_write(store, config, game_id, step)
    out["play_seconds"] = timings["play"]
    out["seconds"] = time.perf_counter() - started
    return out
