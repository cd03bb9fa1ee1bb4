"""Waiters of a gevent worker whose wake-ups come as their waits time out, for
``test_gevent_wakeups.py``: run as ``python -m tests.store.gevent_waiters REDIS_URL``
(gevent patches the standard library first, as in a gunicorn worker, so it needs a
process of its own).  Prints JSON: how many wake-ups each part lost.

The loop is kept busy (a CPU-heavy request) while a wake-up is due and the waiter's
timeout expires: gevent then handles both in one pass of its loop, the wake-up
first, and its ``Event.wait`` says it timed out although the flag is set.
"""

from __future__ import annotations

import json
import sys
import uuid
from contextlib import ExitStack

WAIT = 0.2
"""The waiters' timeout, as an event stream waits for its heartbeat."""


def main(url: str) -> None:
    from gevent import monkey

    monkey.patch_all()

    import gevent
    from gevent.monkey import get_original

    from service.config import Config
    from service.store import GameStore
    from service.store.redis_client import connect
    from service.store.wakeups import WakeUp, Watch
    from tests.store.games import confirmed

    busy = get_original("time", "sleep")  # blocks the whole loop, as CPU work does

    def woken(watch: Watch) -> bool:
        """Whether a wait that times out as the wake-up comes, or the next one, sees it."""
        return watch.wait(WAIT) or watch.wait(WAIT)

    config = Config.from_env({"REDIS_URL": url})
    client = connect(config)
    store = GameStore(client, config=config)

    # A wake-up handled just before the timeout in the same pass of the loop.
    lost_in_a_pass = 0
    for _ in range(10):
        with store.watch(uuid.uuid4().hex) as watch:
            confirmed(watch)
            waiter = gevent.spawn(woken, watch)
            gevent.spawn_later(WAIT * 0.8, watch.wake, WakeUp(1, None, "", [(b"", "", b"{}")]))
            gevent.sleep(0)  # the waiter waits, the wake-up is scheduled
            busy(WAIT * 1.5)  # both are due now
            lost_in_a_pass += not waiter.get()
            assert watch.take(0, None) is not None  # the wake-up was there all along

    # Real commits published to watches of a real store, the loop busy meanwhile.
    lost_from_redis = 0
    for _ in range(5):
        with ExitStack() as stack:
            watches = {}
            for _ in range(10):
                gid = uuid.uuid4().hex
                store.create(gid, b"d", [b"first"])
                watches[gid] = stack.enter_context(store.watch(gid))
                confirmed(watches[gid])
            waiters = [gevent.spawn(woken, watch) for watch in watches.values()]
            gevent.sleep(WAIT / 4)  # they wait
            for gid in watches:
                store.commit(gid, 1, b"d", [b"e"])
            busy(WAIT * 1.5)  # the publishes arrive and the waits time out meanwhile
            lost_from_redis += sum(not waiter.get() for waiter in waiters)
    client.close()
    print(json.dumps({"lost_in_a_pass": lost_in_a_pass, "lost_from_redis": lost_from_redis}))


if __name__ == "__main__":
    main(sys.argv[1])
