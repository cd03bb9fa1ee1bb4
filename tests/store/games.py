"""Games for the store tests: a fresh id, and a commit made later from another thread
(for the waits of the event long poll)."""

from __future__ import annotations

import threading
import time
import uuid

from service.store import GameStore


def new_id() -> str:
    return uuid.uuid4().hex


def commit_later(
    store: GameStore, gid: str, version: int, events: list, delay: float
) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        store.commit(gid, version, b"later", events)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
