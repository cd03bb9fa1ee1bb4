"""Waking a process's waiting clients when their game changes: one subscription per shard.

Every write script publishes the game's last event seq on the game's sharded
pub/sub channel (``SPUBLISH``, :func:`service.store.keys.wake_channel`, in the
game's own slot).  A process keeps one subscriber connection per shard (one on
a plain Redis and on the embedded store; one per primary node on Redis
Cluster), each read by one listener thread -- a greenlet under gevent -- and
subscribes to the channel of each game that has a waiter in the process, for as
long as it has one (and :data:`LINGER_SECONDS` more).  A waiter
(:meth:`Wakeups.watch`) costs a :class:`Watch` in a set: no thread and no
connection of its own, whatever the number of waiters.

No wake-up is lost: a waiter registers first and reads the stream after.  If
the game's channel was already subscribed, a commit after that read publishes
to it; if not, the waiter is woken again when Redis confirms the subscription
(and after a reconnect, when each channel's subscription is confirmed anew), so
a commit made while the subscription was on its way is read then.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from service.store.events import HistoryPage
from service.store.history import Position
from service.store.keys import game_of_channel, wake_channel
from service.store.script_args import deadline_of
from service.store.timeouts import Timeouts

log = logging.getLogger(__name__)

LISTEN_SECONDS = 1.0
"""A listener waits at most this long for a message before it looks at its
subscription changes and its connection's health again."""

LINGER_SECONDS = 30.0
"""A game's channel stays subscribed this long after its last waiter left: a long
poll answered and sent again, or a stream reconnecting, finds it subscribed
(no subscribe, no unsubscribe, no read forced by a new subscription)."""

IDLE_SECONDS = 10.0
"""A shard's listener stops (closing its connection) after this long without a channel."""

RECONNECT_PAUSE_SECONDS = 0.5
"""After a subscriber connection fails, its listener waits this long before reconnecting."""


MAX_PENDING = 64
"""Wake-ups a watch keeps for its reader; past that it tells the reader to read instead."""


class WakeUp(NamedTuple):
    """What a write published: its events, numbered from ``first``, the turn
    deadline, and the tag of the event before ``first`` (``""``: none)."""

    first: int
    deadline: float | None
    before: str
    entries: list[tuple[bytes, str, bytes]]
    """``(seat, tag, event JSON)``: seat ``b""`` for a public event."""


def parse_wake_up(data: bytes) -> WakeUp:
    r"""A wake-up as the write scripts publish it (:mod:`service.store.scripts`).

    >>> parse_wake_up(b'7  0000000000000001\n 7 a\n{"a":1}1 5 b\nab\ncd')
    ...     # doctest: +NORMALIZE_WHITESPACE
    WakeUp(first=7, deadline=None, before='0000000000000001',
           entries=[(b'', 'a', b'{"a":1}'), (b'1', 'b', b'ab\ncd')])
    >>> parse_wake_up(b"3 1700000000.5 \n 2 c\n{}").deadline
    1700000000.5
    """
    head, _, rest = data.partition(b"\n")
    first, deadline, before = head.split(b" ")
    entries = []
    at = 0
    while at < len(rest):
        newline = rest.index(b"\n", at)
        seat, length, tag = rest[at:newline].split(b" ")
        end = newline + 1 + int(length)
        entries.append((seat, tag.decode(), rest[newline + 1 : end]))
        at = end
    return WakeUp(int(first), deadline_of(deadline), before.decode(), entries)


class Watch:
    """One waiter's interest in one game: woken by each of the game's writes with events.

    Made registered by :meth:`Wakeups.watch`; :meth:`close` (or leaving its
    ``with`` block) unregisters it.  It keeps what those writes published
    (:meth:`take` hands it out), so a woken reader usually needs no read.  A
    wake-up without events (the subscription confirmed, or made anew after a
    reconnect, or the process stopping) may follow writes whose publish was not
    received: :meth:`take` then says to read.  A slotted object, no context
    manager generator: thousands exist at once, and every full garbage
    collection walks them.
    """

    __slots__ = ("_event", "_woken", "_pending", "_unsure", "_hub", "_channel", "_shard")

    def __init__(self, hub: Wakeups, channel: str, shard: _Shard) -> None:
        self._event = threading.Event()
        self._woken = False
        self._pending: list[WakeUp] | None = None  # made by the first wake-up with events
        self._unsure = False
        self._hub: Wakeups | None = hub  # None once closed
        self._channel = channel
        self._shard = shard

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop watching (again: nothing)."""
        hub, self._hub = self._hub, None
        if hub is not None:
            hub.release(self, self._channel, self._shard)

    def wake(self, published: WakeUp | None = None) -> None:
        pending = self._pending
        if published is None or (pending is not None and len(pending) >= MAX_PENDING):
            self._unsure = True
        elif pending is None:
            self._pending = [published]
        else:
            pending.append(published)
        self._woken = True
        self._event.set()

    def wait(self, timeout: float) -> bool:
        """Wait until woken or ``timeout`` seconds pass (a tick more at most: the
        process's :class:`~service.store.timeouts.Timeouts` end timed waits, no
        timer per wait); True if woken.  Each wake-up is seen once (the next
        wait waits for the next one), also one that comes as the wait ends."""
        hub = self._hub
        if timeout > 0 and not self._woken and hub is not None:
            tick = hub.timeouts.add(self._event, timeout)
            self._event.wait()
            hub.timeouts.discard(self._event, tick)
        self._event.clear()  # before the flag's look: a wake-up after it sets both anew
        woken, self._woken = self._woken, False
        return woken

    def take(self, cursor: int, seat: int | None, tag: str | None = None) -> HistoryPage | None:
        """The published events after seq ``cursor`` visible to ``seat`` (None:
        public only), the new cursor and the deadline, if what was published since
        the last call follows ``cursor`` without a gap, in the history whose event
        ``cursor`` has ``tag`` (None: in whichever); None if the reader must read
        the stream instead (a wake-up without events, a gap, another history, or
        nothing new)."""
        pending, self._pending = self._pending or (), None
        if self._unsure:
            self._unsure = False
            return None
        wanted = b"" if seat is None else str(seat).encode()
        found: list[tuple[int, str, bytes]] = []
        deadline: float | None = None
        start = cursor
        for published in pending:
            last = published.first + len(published.entries) - 1
            if last <= cursor:
                continue
            if published.first > cursor + 1:
                return None  # a write between: its events are in the stream only
            at = cursor - published.first
            if (
                tag is not None
                and (published.entries[at][1] if at >= 0 else published.before) != tag
            ):
                return None  # another history: the stream says which
            for seq, (owner, made, event) in enumerate(published.entries[at + 1 :], cursor + 1):
                if owner == b"" or owner == wanted:
                    found.append((seq, made, event))
            cursor, deadline, tag = last, published.deadline, published.entries[-1][1]
        if cursor == start or tag is None:
            return None
        return HistoryPage(found, Position(cursor, tag), deadline)


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
        self.channels: dict[str, float | None] = {}
        """Subscribed channels: since when each has had no waiter (None: it has one).
        Changed under the hub's lock."""
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

    def _sweep(self, now: float) -> None:
        """Unsubscribe the channels without a waiter for :data:`LINGER_SECONDS`."""
        with self.sending:
            for channel in self._hub.forget_lingering(self, now - LINGER_SECONDS):
                self.send("sunsubscribe", channel)

    def _run(self) -> None:
        idle_since: float | None = None
        while not self._hub.stopped:
            try:
                pubsub = self._connect()
                swept = time.monotonic()
                while not self._hub.stopped:
                    message = pubsub.get_message(timeout=LISTEN_SECONDS)
                    if message is not None:
                        self._hub.dispatch(message)
                    if time.monotonic() - swept >= LISTEN_SECONDS:
                        swept = time.monotonic()
                        self._sweep(swept)
                        idle_since = self._idle(idle_since)
            except _Idle:
                return
            except Exception as exc:  # Redis down or restarting: reconnect, resubscribe
                log.warning("wake-up subscription %s failed, reconnecting: %s", self.name, exc)
                with self.sending:
                    broken, self._pubsub = self._pubsub, None
                _close(broken)
                self._hub.wake_shard(self)  # they read again: nothing is missed meanwhile
                with self.sending:  # lingering channels are not worth reconnecting for
                    self._hub.forget_lingering(self, math.inf)
                    if not self._hub.channels_of(self):
                        self._running = False
                        return
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
    shard's subscriber (see :func:`service.store.redis_client.subscribers`).
    Thread-safe.
    """

    def __init__(self, subscriber_for: Callable[[str], tuple[str, Callable[[], Subscriber]]]):
        self._subscriber_for = subscriber_for
        self._lock = threading.Lock()
        self._watches: dict[str, set[Watch]] = {}
        self._shard_of: dict[str, _Shard] = {}
        self._shards: dict[str, _Shard] = {}
        self.timeouts = Timeouts()
        self.stopped = False

    def watch(self, game_id: str) -> Watch:
        """A watch woken by ``game_id``'s commits until it is closed."""
        channel = wake_channel(game_id)
        with self._lock:
            shard = self._shard(channel)
            watch = Watch(self, channel, shard)
            self._watches.setdefault(channel, set()).add(watch)
            new = channel not in shard.channels
            shard.channels[channel] = None
            if self.stopped:
                watch.wake()
        if new:
            try:
                with shard.sending:
                    shard.send("ssubscribe", channel)
            except BaseException:
                watch.close()
                raise
        return watch

    def release(self, watch: Watch, channel: str, shard: _Shard) -> None:
        """Unregister ``watch`` (see :meth:`Watch.close`)."""
        with self._lock:
            watches = self._watches[channel]
            watches.discard(watch)
            if not watches:  # subscribed still, for a while (see LINGER_SECONDS)
                del self._watches[channel]
                shard.channels[channel] = time.monotonic()

    def forget_lingering(self, shard: _Shard, before: float) -> list[str]:
        """Drop the channels of ``shard`` without a waiter since ``before``; they are
        the caller's to unsubscribe (holding the shard's :attr:`~_Shard.sending`)."""
        with self._lock:
            gone = [
                c for c, since in shard.channels.items() if since is not None and since < before
            ]
            for channel in gone:
                del shard.channels[channel]
                del self._shard_of[channel]
            return gone

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
        """The channels ``shard`` subscribes to (with waiters, or lingering)."""
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
        published = None
        if kind == "smessage":
            try:
                published = parse_wake_up(message["data"])
            except (TypeError, ValueError):
                log.warning("ignoring a malformed wake-up on %s", game_of_channel(channel))
                return
        with self._lock:
            watches = list(self._watches.get(channel, ()))
        for watch in watches:
            watch.wake(published)

    def wake_shard(self, shard: _Shard) -> None:
        for channel in self.channels_of(shard):
            with self._lock:
                watches = list(self._watches.get(channel, ()))
            for watch in watches:
                watch.wake()

    def waiting(self) -> int:
        """The number of waiters now (tests check that a watch is released)."""
        with self._lock:
            return sum(len(w) for w in self._watches.values())

    def stop(self) -> None:
        """Wake every waiter now and from now on (the process is stopping)."""
        with self._lock:
            self.stopped = True
            watches = [w for ws in self._watches.values() for w in ws]
        for watch in watches:
            watch.wake()
