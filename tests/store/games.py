"""Games for the store tests: a fresh id, a commit made later from another thread,
and waiting on a watch for a seq (for the wake-ups of waiting readers)."""

from __future__ import annotations

import threading
import time
import uuid

from service.store import GameStore
from service.store.events import HistoryPage, Page
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


def published(
    watch: Watch, cursor: int, seat: int | None = None, timeout: float = 5.0
) -> tuple[Page, float]:
    """Wait until ``watch`` hands out what a write published after ``cursor`` (as
    :meth:`Watch.take` does); that page and the seconds it took.  Fails if it did
    not within ``timeout``."""
    started = time.monotonic()
    while True:
        left = timeout - (time.monotonic() - started)
        assert left > 0 and watch.wait(left), f"nothing published after {cursor} in {timeout} s"
        page = watch.take(cursor, seat)
        if page is not None:
            return untagged(page), time.monotonic() - started


def confirmed(watch: Watch, timeout: float = 5.0) -> None:
    """Wait for the wake-up that confirms ``watch``'s subscription (its first): one
    without events, after which a reader must read the stream."""
    assert watch.wait(timeout), "the subscription was not confirmed"
    assert watch.take(0, None) is None


def untagged(page: HistoryPage) -> Page:
    """``page`` as :meth:`GameStore.events` reads it: no tags."""
    assert page.reset is None
    return Page([(seq, event) for seq, _tag, event in page.events], page.cursor.seq, page.deadline)
