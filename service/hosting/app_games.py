"""An app's concurrent-games limit (``concurrent_games``: :data:`~service.hosting.apps.LIMITS`):
how many of its games may be not yet ended -- waiting for players or in play -- at once.

Every game of an app (its id names it: :func:`~service.hosting.tokens.app_of_game`)
is counted in the app's live games (:mod:`service.store.live_games`) before its
first write, atomically against the limit (:func:`take`): a create, a quick-join's
new table, a rematch.  What stops counting, and when:

* a game that ends -- finished, cancelled, aborted, anything but waiting or
  playing -- is dropped by the write that ends it, whoever makes it (a request, a
  bot worker's turn timer, a command: :func:`ended`, called by the write loop);
* a game whose write never landed (its request failed) or that expired unplayed,
  and an end whose drop was lost (the process died between the two writes), are
  found by reading the games: an app at its limit has every game it counts read
  first (:func:`_heal`; at most every :data:`HEAL_SECONDS`, across the instances,
  so that creates refused in a stream cost no more than one read of its games),
  and each create reads the app's few games not found live for
  :data:`RECHECK_SECONDS` (:func:`_recheck`), so the set does not grow with
  abandoned games of an app without a limit.

A member is dropped only once its game is read and found ended or gone (a game
whose first write is under way counts :data:`PENDING_SECONDS` before it may be
found gone), so the count is never below the app's live games, and a refusal is
decided on the games' own state: exact across every instance.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson

from service.config import Config
from service.hosting import apps
from service.hosting.record import GameRecord
from service.hosting.refusals import AppLimitError
from service.hosting.tokens import app_of_game
from service.store import GameStore, StoreUnavailable

log = logging.getLogger(__name__)

LIMIT = "concurrent_games"

LIVE = frozenset({"waiting", "playing"})
"""The statuses of a game that counts."""

PENDING_SECONDS = 60.0
"""How long a game just counted may be missing from the store (its first write
under way) before it is found gone."""

RECHECK_SECONDS = 3600.0
"""A game not found live for this long is read again by the app's next create."""

RECHECKED = 4
"""Games read again by each create, at most."""

HEAL_SECONDS = 5.0
"""An app at its limit has all its games read at most this often."""

RETRY_AFTER_SECONDS = 60
"""A game ends when its players finish it, not at a time the service knows."""


def take(store: GameStore, config: Config, record: GameRecord) -> None:
    """Count ``record``, a new game, among its app's live games (nothing for a game
    of no app); :class:`AppLimitError` when the app has its limit of them already."""
    app_id = app_of_game(record.id)
    if app_id is None:
        return
    found = store.apps.load_app(app_id)
    most = (
        int(config.app_concurrent_games)
        if found is None
        else apps.App.from_bytes(found).limit(LIMIT, config)
    )
    _recheck(store, app_id)
    if store.live_games.take(app_id, record.id, most) is not None:
        return
    _heal(store, app_id)
    if store.live_games.take(app_id, record.id, most) is None:
        raise AppLimitError(
            f"app limit: the app has {most} games not finished, the most it may "
            f"({LIMIT}); finish or cancel one first",
            limit=LIMIT,
            scope="app",
            retry_after=RETRY_AFTER_SECONDS,
        )


def ended(store: GameStore, record: GameRecord) -> None:
    """After a write of ``record``: if it left the game ended, its app counts it no
    more (a store failing now leaves it to be found ended)."""
    if record.status in LIVE:
        return
    app_id = app_of_game(record.id)
    if app_id is None:
        return
    try:
        store.live_games.drop(app_id, [record.id])
    except StoreUnavailable as exc:
        log.warning("ended game not dropped from its app's live games: %s", exc)


def _states(store: GameStore, game_ids: list[str]) -> dict[str, str | None]:
    """Each game's status (None: gone)."""
    found: dict[str, str | None] = {}
    for game_id, state in zip(game_ids, store.lobby.states(game_ids), strict=True):
        public: dict[str, Any] | None = None if state is None else orjson.loads(state[0])
        found[game_id] = None if public is None else str(public["status"])
    return found


def _sort(
    store: GameStore, app_id: str, games: list[tuple[str, float]]
) -> tuple[list[str], list[str]]:
    """``(live, stale)`` of ``games`` (``(id, since)``), read from the store: a game
    gone counts while it may still be being made."""
    now = time.time()
    states = _states(store, [game_id for game_id, _ in games])
    live, stale = [], []
    for game_id, since in games:
        status = states[game_id]
        if status in LIVE or (status is None and now - since < PENDING_SECONDS):
            live.append(game_id)
        else:
            stale.append(game_id)
    store.live_games.drop(app_id, stale)
    return live, stale


def _heal(store: GameStore, app_id: str) -> None:
    """Read every game the app counts and drop the ended and gone ones (unless it
    was done less than :data:`HEAL_SECONDS` ago)."""
    if store.live_games.may_heal(app_id, HEAL_SECONDS):
        _sort(store, app_id, store.live_games.games(app_id))


def _recheck(store: GameStore, app_id: str) -> None:
    """Read the app's few games not found live for :data:`RECHECK_SECONDS`: drop
    the ended and gone ones, note the others live now."""
    old = store.live_games.oldest(app_id, time.time() - RECHECK_SECONDS, RECHECKED)
    if old:
        live, _stale = _sort(store, app_id, [(game_id, 0.0) for game_id in old])
        store.live_games.seen(app_id, live)
