"""Caps on the event streams a client holds open at once: per client address and per seat.

A stream here is a waiting read of ``GET /v1/games/{id}/events``: an SSE or
NDJSON stream for as long as it is open, or a long poll while it waits (one
that finds events at once answers at once, and is not counted).  Each counts
against its client's address -- ``REMOTE_ADDR``, which behind proxies is the
address ``TRUSTED_PROXY_HOPS`` finds (see :mod:`service.api.limits`) --
anonymous ones included; and against its seat when a bearer token or a stream
ticket proved one (``STREAM_LIMIT_PER_ADDRESS``, ``STREAM_LIMIT_PER_SEAT``).
Over either cap the answer is 429 ``TOO_MANY_STREAMS`` with ``Retry-After``
(:func:`service.api.problems.answer_for`), before anything is read.

The counts are Redis's, shared by every worker and instance, as leases that
lapse (:mod:`service.store.stream_leases`): a stream holds its lease for
:attr:`StreamCaps.lease_seconds`, renewed at a heartbeat past half of it, and
gives it back as it ends; a long poll holds one for its wait and half a lease
more.  So a worker or an instance that dies leaves its clients' places taken
for one lease's life at most.  ``RATE_LIMITS=false`` turns the caps off with
the other per-client limits (the load balancer's own then stand: the shipped
nginx caps streams per address too); a cap of 0 turns that cap off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.config import Config
from service.store import GameStore
from service.store.stream_leases import Holder, Lease, address_holder, seat_holder

LEASE_HEARTBEATS = 4
"""A stream's lease lives this many heartbeats (``SSE_HEARTBEAT_SECONDS``): renewed
at the first heartbeat past half its life, it has two heartbeats' slack."""

MIN_LEASE_SECONDS = 10.0
"""The shortest lease, whatever the heartbeat: a worker busy for a moment must not
let its streams' leases lapse."""


@dataclass(frozen=True, slots=True)
class StreamCaps:
    """The caps (0: none) and how long a stream's lease lives."""

    per_address: int
    per_seat: int
    lease_seconds: float

    @classmethod
    def from_config(cls, config: Config) -> StreamCaps | None:
        """The caps of ``config``; None when ``RATE_LIMITS`` is off or both caps are 0."""
        if not config.rate_limits_enabled:
            return None
        if not config.stream_limit_per_address and not config.stream_limit_per_seat:
            return None
        return cls(
            config.stream_limit_per_address,
            config.stream_limit_per_seat,
            max(MIN_LEASE_SECONDS, LEASE_HEARTBEATS * config.sse_heartbeat_seconds),
        )

    def take(
        self,
        store: GameStore,
        environ: dict[str, Any],
        game_id: str,
        seat: int | None,
        wait: float | None,
    ) -> Lease:
        """The lease of a stream (``wait`` None) or of a long poll about to wait
        ``wait`` seconds, from the client of ``environ`` on ``seat`` of ``game_id``
        (None: a spectator).  Raises :class:`~service.store.store_errors.TooManyStreams`
        over a cap."""
        holders: list[Holder] = []
        if self.per_address:
            address = environ.get("REMOTE_ADDR") or "unknown"
            holders.append(address_holder(address, self.per_address))
        if self.per_seat and seat is not None:
            holders.append(seat_holder(game_id, seat, self.per_seat))
        seconds = self.lease_seconds if wait is None else wait + self.lease_seconds / 2
        return store.streams.take(holders, seconds)
