"""Games for the store tests: a fresh id, a commit made later from another thread,
and waiting on a watch for a seq (for the wake-ups of waiting readers)."""

from __future__ import annotations

import threading
import time
import uuid

from service.store import GameStore
from service.store.wakeups import Watch


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


def woken_for(watch: Watch, seq: int, timeout: float = 5.0) -> float:
    """Wait until ``watch`` has been woken by the publish of ``seq`` (or a later one);
    the seconds it took.  Fails if it was not within ``timeout``."""
    started = time.monotonic()
    while watch.seq < seq:
        left = timeout - (time.monotonic() - started)
        assert left > 0 and watch.wait(left), f"not woken for seq {seq} within {timeout} s"
    return time.monotonic() - started


def confirmed(watch: Watch, timeout: float = 5.0) -> None:
    """Wait for the wake-up that confirms ``watch``'s subscription (its first): one
    without a seq, after which a reader must read."""
    assert watch.wait(timeout), "the subscription was not confirmed"
    assert watch.seq == 0 and watch.news(0)
    assert not watch.news(0)  # told once
