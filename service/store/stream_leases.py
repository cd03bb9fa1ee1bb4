"""Leases of open event streams, counted per holder across every worker and instance.

An event stream (SSE, NDJSON) or a waiting long poll holds a lease on each of
its holders: its client's address, and its seat when a token or a ticket proved
one (:mod:`service.api.stream_caps` says which, and how many each may hold).
A holder's leases are a sorted set (:func:`~service.store.keys.address_streams_key`,
:func:`~service.store.keys.seat_streams_key`): member a lease's id, score the
time it lapses (ms).  Taking a lease is one script (:data:`LEASE_SCRIPT`) on all
the stream's holders at once, one round trip (on Redis Cluster, where they are in
different slots, one a holder): it drops each holder's lapsed leases, refuses
when a holder has as many live ones as its cap, else adds this one to each and
keeps each key until its last lease lapses.  A stream renews its leases at a heartbeat past
half their life (:meth:`Lease.keep`) and gives them back when it ends
(:meth:`Lease.release`, one round trip).  A process that dies without giving
its leases back leaves them to lapse: a crash holds a holder's places for one
lease's life at most.  A renewal adds a lease anew if it lapsed meanwhile (a
late heartbeat): an open stream is counted again, never cut.

Nothing here runs per event: a lease is taken when a stream opens (or a long
poll starts waiting), renewed at heartbeats, given back when it ends.  With the
embedded store the sets live in its in-process server, like every other key.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from service.store import keys
from service.store.failures import translate_errors
from service.store.store_errors import StoreUnavailable, TooManyStreams

log = logging.getLogger(__name__)

LEASE_SCRIPT = """
-- Take or renew a stream's lease on its holders (a client address, a seat): on all of
-- them or on none.  The holders' keys are of different slots: on Redis Cluster the
-- script is run for one holder at a time.
-- KEYS the holders' sorted sets of leases: member a lease id, score when it lapses (ms)
-- ARGV[1] the lease id, ARGV[2] now (ms), ARGV[3] when the lease lapses (ms),
-- ARGV[3 + i] the most live leases KEYS[i] may have, or 0: no cap (a renewal)
-- Drops each holder's lapsed leases; refuses if a holder has as many live leases
-- as its cap (this one not among them); else holds the lease until ARGV[3] on every
-- holder and keeps each key until its last lease lapses.
-- Returns 0 once held; else {i, ms until the first lease of KEYS[i] lapses (>= 1)}
-- for the first holder refusing it (nothing changed but lapsed leases dropped).
local now = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local cap = tonumber(ARGV[3 + i])
  if cap > 0 and not redis.call('ZSCORE', key, ARGV[1])
      and redis.call('ZCARD', key) >= cap then
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    return {i, math.max(1, tonumber(first[2]) - now)}
  end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[3], ARGV[1])
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', key, last[2])
end
return 0
"""


class Holder(NamedTuple):
    """What a lease is held on: ``name`` (``"address"``, ``"seat"``: what a refusal
    names), its set of leases, and the most live leases it may have."""

    name: str
    key: str
    cap: int


def address_holder(address: str, cap: int) -> Holder:
    """A client address, holding at most ``cap`` leases."""
    return Holder("address", keys.address_streams_key(address), cap)


def seat_holder(game_id: str, seat: int, cap: int) -> Holder:
    """Seat ``seat`` of ``game_id``, holding at most ``cap`` leases."""
    return Holder("seat", keys.seat_streams_key(game_id, seat), cap)


ScriptCall = Callable[..., Any]
"""A registered script of redis-py: ``run(keys=[...], args=[...])``."""

Execute = Callable[..., list[Any]]
"""Commands sent in one round trip (on Redis Cluster, one per node), their replies."""


class StreamLeases:
    """Takes leases (thread-safe; one per :class:`~service.store.GameStore`):
    ``script`` runs :data:`LEASE_SCRIPT`, on all of a lease's holders at once when
    ``together`` (one Redis: one round trip), else on one at a time (Redis Cluster:
    the holders' keys are in different slots); ``execute`` sends plain commands."""

    def __init__(self, script: ScriptCall, execute: Execute, together: bool) -> None:
        self._script = script
        self._execute = execute
        self._together = together

    def _groups(self, holders: list[Holder]) -> list[list[Holder]]:
        """The holders each run of the script handles."""
        return [holders] if self._together else [[holder] for holder in holders]

    def take(self, holders: list[Holder], seconds: float) -> Lease:
        """A lease of ``seconds`` on each of ``holders``, in order; if one has as
        many live leases as its cap already, those taken are given back and
        :class:`TooManyStreams` is raised, naming it.  Raises
        :class:`StoreUnavailable` (nothing held then either)."""
        lease = Lease(self, f"{random.getrandbits(64):016x}", seconds)
        try:
            for group in self._groups(holders) if holders else ():
                now = time.time()
                args = [lease.id, _ms(now), _ms(now + seconds), *[h.cap for h in group]]
                with translate_errors():
                    refused = self._script(keys=[h.key for h in group], args=args)
                if refused:
                    index, wait = refused
                    holder = group[int(index) - 1]
                    raise TooManyStreams(holder.name, holder.cap, int(wait) / 1000)
                lease.holders += [(h.name, h.key) for h in group]
        except BaseException:
            lease.release()
            raise
        return lease

    def renew(self, keys: list[str], lease_id: str, seconds: float) -> None:
        """Hold lease ``lease_id`` on each of ``keys`` for ``seconds`` from now."""
        for group in self._groups([Holder("", key, 0) for key in keys]):
            now = time.time()
            args = [lease_id, _ms(now), _ms(now + seconds), *[0 for _ in group]]
            with translate_errors():
                self._script(keys=[h.key for h in group], args=args)

    def give_back(self, keys: list[str], lease_id: str) -> None:
        """Drop lease ``lease_id`` from each of ``keys`` (one round trip)."""
        if keys:
            with translate_errors():
                self._execute(*[("ZREM", key, lease_id) for key in keys])


class Lease:
    """A stream's lease on each of its holders (:meth:`StreamLeases.take`).

    A slotted object: one per open stream, thousands at once."""

    __slots__ = ("_leases", "id", "holders", "_seconds", "_renew_at")

    def __init__(self, leases: StreamLeases, lease_id: str, seconds: float) -> None:
        self._leases = leases
        self.id = lease_id
        self.holders: list[tuple[str, str]] = []
        """``(name, key)`` of each holder the lease is held on."""
        self._seconds = seconds
        self._renew_at = time.monotonic() + seconds / 2

    def keep(self) -> None:
        """Renew the lease once half its life has passed (before: nothing, no
        round trip).  Raises :class:`StoreUnavailable`."""
        now = time.monotonic()
        if now < self._renew_at or not self.holders:
            return
        self._leases.renew([key for _name, key in self.holders], self.id, self._seconds)
        self._renew_at = now + self._seconds / 2

    def release(self, name: str | None = None) -> None:
        """Give the lease back on holder ``name`` (None: on every holder).  Never
        raises: a lease Redis could not be told about lapses by itself."""
        gone = [h for h in self.holders if name is None or h[0] == name]
        if not gone:
            return
        self.holders = [h for h in self.holders if h not in gone]
        try:
            self._leases.give_back([key for _name, key in gone], self.id)
        except StoreUnavailable as exc:
            log.info("could not give back a stream's lease (it lapses by itself): %s", exc)


def _ms(seconds: float) -> int:
    return int(seconds * 1000)
