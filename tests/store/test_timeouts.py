"""The process's ticker ends timed waits on time, at most a tick late, and forgets
waits that ended otherwise; it runs only while some wait is timed."""

from __future__ import annotations

import threading
import time

from service.store.timeouts import TICK_SECONDS, Timeouts


def test_a_timed_wait_ends_once_its_time_has_passed_and_not_before() -> None:
    timeouts = Timeouts()
    events = {seconds: threading.Event() for seconds in (0.1, 0.3)}
    started = time.monotonic()
    for seconds, event in events.items():
        timeouts.add(event, seconds)
    ended = {}
    for seconds, event in events.items():
        assert event.wait(5)
        ended[seconds] = time.monotonic() - started
    for seconds, took in ended.items():
        assert seconds <= took < seconds + TICK_SECONDS + 0.5  # a loaded machine's slack
    assert timeouts.pending() == 0


def test_a_discarded_wait_is_not_ended_and_the_ticker_stops() -> None:
    timeouts = Timeouts()
    event = threading.Event()
    tick = timeouts.add(event, 0.1)
    timeouts.discard(event, tick)
    assert timeouts.pending() == 0
    assert not event.wait(0.3)
    deadline = time.monotonic() + 5
    ticker = f"timeouts-{id(timeouts):x}"
    while any(t.name == ticker and t.is_alive() for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the ticker still runs with no wait timed"
        time.sleep(0.02)
