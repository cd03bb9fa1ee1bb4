"""Waking a process's waiting clients when their game changes: one subscription per shard.

Every write script publishes the game's last event seq on the game's sharded
pub/sub channel (``SPUBLISH``, :func:`service.store.keys.wake_channel`, in the
game's own slot).  A process keeps one subscriber connection per shard (one on
a plain Redis and on the embedded store; one per primary node on Redis
Cluster), each read by one listener thread -- a greenlet under gevent -- and
subscribes to the channel of each game that has a waiter in the process, for as
long as it has one.  A waiter (:meth:`Wakeups.watch`) costs a :class:`Watch` in
a set: no thread and no connection of its own, whatever the number of waiters.

No wake-up is lost: a waiter registers first and reads the stream after.  If
the game's channel was already subscribed, a commit after that read publishes
to it; if not, the waiter is woken again when Redis confirms the subscription
(and after a reconnect, when each channel's subscription is confirmed anew), so
a commit made while the subscription was on its way is read then.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from service.store.keys import game_of_channel, wake_channel

log = logging.getLogger(__name__)

LISTEN_SECONDS = 1.0
"""A listener waits at most this long for a message before it looks at its
subscription changes and its connection's health again."""

IDLE_SECONDS = 10.0
"""A shard's listener stops (closing its connection) after this long without a channel."""

RECONNECT_PAUSE_SECONDS = 0.5
"""After a subscriber connection fails, its listener waits this long before reconnecting."""


class Watch:
    """One waiter's interest in one game: woken by the game's next publish.

    ``seq`` is the highest seq published for the game since the watch began (0:
    none seen).  A wake-up without a seq (the subscription confirmed, or made
    anew after a reconnect, or the process stopping) may follow commits whose
    publish was not received: :meth:`news` then says to read whatever the seq.
    """

    __slots__ = ("_event", "_unsure", "seq")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._unsure = False
        self.seq = 0

    def wake(self, seq: int | None = None) -> None:
        if seq is None:
            self._unsure = True
        else:
            self.seq = max(self.seq, seq)
        self._event.set()

    def wait(self, timeout: float) -> bool:
        """Wait until woken or ``timeout`` seconds pass; True if woken.  Each wake-up
        is seen once (the next wait waits for the next one)."""
        woken = self._event.wait(max(0.0, timeout))
        self._event.clear()
        return woken

    def news(self, cursor: int) -> bool:
        """Whether a reader at ``cursor`` may have events to read since it was last
        told so (a publish past ``cursor``, or a wake-up without a seq)."""
        unsure, self._unsure = self._unsure, False
        return unsure or self.seq > cursor


Subscriber = Any
"""A redis-py ``PubSub`` (or fakeredis's) of one shard."""


class _Shard:
    """One subscriber connection and its listener thread, for the channels of one shard.

    Every subscribe and unsubscribe of the shard is sent under :attr:`sending`,
    and the decision to unsubscribe is taken under it too, so a channel's
    subscribe never overtakes the unsubscribe of its previous waiters.  The
    listener starts with the shard's first channel and stops, closing its
    connection, once the shard has had none for :data:`IDLE_SECONDS`.
    """

    def __init__(self, name: str, make: Callable[[], Subscriber], hub: Wakeups) -> None:
        self.name = name
        self.sending = threading.Lock()
        self.channels: set[str] = set()  # changed under the hub's lock
        self._make = make
        self._hub = hub
        self._pubsub: Subscriber = None
        self._running = False

    def send(self, command: str, channel: str) -> None:
        """``ssubscribe`` or ``sunsubscribe`` ``channel``; call holding :attr:`sending`.

        Without a listener, a subscribe starts one (it subscribes every channel
        of the shard when connected); a failure is the listener's to handle:
        it reconnects and subscribes anew."""
        if not self._running:
            if command == "ssubscribe":
                self._running = True
                threading.Thread(target=self._run, name=f"wakeups-{self.name}", daemon=True).start()
            return
        if self._pubsub is None:  # connecting: it subscribes the shard's channels then
            return
        try:
            getattr(self._pubsub, command)(channel)
        except Exception as exc:
            log.warning("wake-up subscription %s: %s failed: %s", self.name, command, exc)

    def _connect(self) -> Subscriber:
        pubsub = self._make()
        with self.sending:
            for channel in self._hub.channels_of(self):  # one a command: a cluster node
                pubsub.ssubscribe(channel)  # refuses channels of several slots in one
            self._pubsub = pubsub
        return pubsub

    def _idle(self, since: float | None) -> float | None:
        """When the shard became idle (None: it is not); stops the listener (under
        :attr:`sending`) once it has been for :data:`IDLE_SECONDS`."""
        if self._hub.channels_of(self):
            return None
        now = time.monotonic()
        if since is None or now - since < IDLE_SECONDS:
            return since or now
        with self.sending:
            if self._hub.channels_of(self):
                return None
            self._running = False
            idle, self._pubsub = self._pubsub, None
        _close(idle)
        raise _Idle

    def _run(self) -> None:
        idle_since: float | None = None
        while not self._hub.stopped:
            try:
                pubsub = self._connect()
                while not self._hub.stopped:
                    message = pubsub.get_message(timeout=LISTEN_SECONDS)
                    if message is not None:
                        self._hub.dispatch(message)
                    else:
                        idle_since = self._idle(idle_since)
            except _Idle:
                return
            except Exception as exc:  # Redis down or restarting: reconnect, resubscribe
                log.warning("wake-up subscription %s failed, reconnecting: %s", self.name, exc)
                with self.sending:
                    broken, self._pubsub = self._pubsub, None
                _close(broken)
                self._hub.wake_shard(self)  # they read again: nothing is missed meanwhile
                time.sleep(RECONNECT_PAUSE_SECONDS)
        with self.sending:
            self._running = False
            stopped, self._pubsub = self._pubsub, None
        _close(stopped)


class _Idle(Exception):
    """A listener with nothing to listen to: it stops."""


def _close(pubsub: Subscriber) -> None:
    try:
        if pubsub is not None:
            pubsub.close()
    except Exception:  # already broken
        pass


class Wakeups:
    """A process's waiters, by game, and its subscriptions to their games' channels.

    ``subscriber_for(channel)`` names the shard of a channel and makes that
    shard's subscriber (see :func:`service.store.client.subscriber_for`).
    Thread-safe.
    """

    def __init__(self, subscriber_for: Callable[[str], tuple[str, Callable[[], Subscriber]]]):
        self._subscriber_for = subscriber_for
        self._lock = threading.Lock()
        self._watches: dict[str, set[Watch]] = {}
        self._shard_of: dict[str, _Shard] = {}
        self._shards: dict[str, _Shard] = {}
        self.stopped = False

    @contextmanager
    def watch(self, game_id: str) -> Iterator[Watch]:
        """Be woken by ``game_id``'s commits while inside the block."""
        watch = Watch()
        channel = wake_channel(game_id)
        with self._lock:
            shard = self._shard(channel)
            watches = self._watches.setdefault(channel, set())
            new = not watches
            watches.add(watch)
            shard.channels.add(channel)
            if self.stopped:
                watch.wake()
        try:
            if new:
                with shard.sending:
                    shard.send("ssubscribe", channel)
            yield watch
        finally:
            with shard.sending:
                with self._lock:
                    watches = self._watches[channel]
                    watches.discard(watch)
                    gone = not watches
                    if gone:
                        del self._watches[channel]
                        del self._shard_of[channel]
                        shard.channels.discard(channel)
                if gone:
                    shard.send("sunsubscribe", channel)

    def _shard(self, channel: str) -> _Shard:
        """The shard of ``channel`` (call holding the lock)."""
        shard = self._shard_of.get(channel)
        if shard is None:
            name, make = self._subscriber_for(channel)
            shard = self._shards.get(name)
            if shard is None:
                shard = self._shards[name] = _Shard(name, make, self)
            self._shard_of[channel] = shard
        return shard

    def channels_of(self, shard: _Shard) -> list[str]:
        """The channels of ``shard`` that have waiters."""
        with self._lock:
            return list(shard.channels)

    def dispatch(self, message: dict[str, Any]) -> None:
        """A message of a subscriber: a publish wakes the game's waiters; so does a
        subscription's confirmation (what was committed before it is read again)."""
        kind = message.get("type")
        if kind not in ("smessage", "ssubscribe"):
            return
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else channel
        seq = None
        if kind == "smessage":
            try:
                seq = int(message["data"])
            except (TypeError, ValueError):
                log.warning("ignoring a malformed wake-up on %s", game_of_channel(channel))
                return
        with self._lock:
            watches = list(self._watches.get(channel, ()))
        for watch in watches:
            watch.wake(seq)

    def wake_shard(self, shard: _Shard) -> None:
        for channel in self.channels_of(shard):
            with self._lock:
                watches = list(self._watches.get(channel, ()))
            for watch in watches:
                watch.wake()

    def waiting(self) -> int:
        """The number of waiters (for metrics and tests)."""
        with self._lock:
            return sum(len(w) for w in self._watches.values())

    def stop(self) -> None:
        """Wake every waiter now and from now on (the process is stopping)."""
        with self._lock:
            self.stopped = True
            watches = [w for ws in self._watches.values() for w in ws]
        for watch in watches:
            watch.wake()
