"""Rematches started and replays published, over a store.

A finished game's rematch is made by the first player to ask; its id is the
finished game's own function (:func:`~service.hosting.tokens.rematch_game_id`,
through :func:`~service.hosting.replays.rematch_record`), so players asking at
once make the same game: the first creation stands, the others find it there.
Then the finished game links it (once).  A finished game's replay is built once
and saved: it never changes.

Plain Python over a store, like :mod:`service.hosting.write_loop`.
"""

from __future__ import annotations

from typing import Any

import orjson

from service.config import Config
from service.engine.game_events import Event
from service.hosting.record import GameRecord
from service.hosting.refusals import GameNotFinishedError
from service.hosting.replays import build_replay, rematch_record
from service.hosting.snapshots import snapshot
from service.hosting.write_loop import Write, create_game, optimistic_write
from service.store import GameExists, GameStore


def rematch(store: GameStore, config: Config, old: GameRecord) -> str:
    """The id of the rematch of ``old`` (a finished game, read by the caller, who
    checked the asker holds a seat there), made and linked if it was not yet."""
    if old.rematch_id is not None:
        return old.rematch_id
    new = rematch_record(old)
    created = Event("game_created", {"seats": len(new.seats), "rematch_of": old.id})
    try:
        create_game(store, config, new, [created])
    except GameExists:
        pass  # another player asked at the same time: theirs is this very game

    def link(version: int, record: GameRecord) -> tuple[Write | None, None]:
        if record.rematch_id is not None:
            return None, None
        record.rematch_id = new.id
        linked = Event("rematch_created", {"game": new.id})
        return Write([linked], snapshot(record, version + 1)), None

    optimistic_write(store, config, old.id, link)
    return new.id


def replay_text(store: GameStore, record: GameRecord) -> bytes:
    """The JSON text of the replay of ``record``, a finished game
    (:class:`GameNotFinishedError` before it is)."""
    if record.status != "finished":  # before the log is read
        raise GameNotFinishedError("the replay is published once the game is finished")
    text = store.load_replay(record.id)
    if text is None:  # built once: a finished game's replay never changes
        text = orjson.dumps(build_replay(record, _all_events(store, record)))
        store.save_replay(record.id, text)
    return text


def _all_events(store: GameStore, record: GameRecord) -> list[dict[str, Any]]:
    """The whole log: each seat sees the public events and its own private ones."""
    merged: dict[int, bytes] = {}
    for seat in range(len(record.seats)):
        merged.update(store.all_events(record.id, seat))
    return [orjson.loads(merged[seq]) for seq in sorted(merged)]
