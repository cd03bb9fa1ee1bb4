"""The hot path to Redis: idle connections of its own, without the client's per-call machinery.

redis-py's ``Redis.execute_command`` wraps every command in a connection-pool
checkout and release, a retry closure, event dispatch and (since 8.x)
observability hooks: measured here at about 70 µs of CPU per command, more
than the command's own socket work (``bench/redis_link_bench.py``).  The
requests a game client repeats -- views and moves -- cost one or two round
trips each, so :class:`Link` sends those commands (``HMGET``, a pipeline of
them, ``EVALSHA``) straight over an idle connection of its own.

A round trip is one ``sendall`` of the commands packed by hiredis and reads
into a hiredis ``Reader`` until every reply is in: redis-py's own
``read_response`` layers (push messages, per-read timeout juggling, health
checks) cost about as much again as the socket calls, and none of them apply
to these commands.  Everything else is redis-py's: the ``Connection`` makes
and tears down the socket (timeouts, TLS, AUTH, SELECT), error replies become
redis-py's exceptions through its own table, and its ``Retry`` retries a
round trip that failed on a connection error or timeout, on a new connection
(a re-sent write is recognised by its write id, see
:mod:`service.store.game_store`).  A connection idle past the client's
health-check interval is pinged before use, as redis-py would.  Its
connections are the client's bounded ones (:mod:`service.store.bounded`), and
a round trip waits no longer than they would: what is left of the request's
budget, and not at all while the server's circuit is open.

Only for a plain ``redis.Redis`` (also the primary Redis Sentinel names: its
connections find it through the Sentinels, see :mod:`service.store.sentinel`;
a ``READONLY`` reply there, from a demoted primary, is retried on a new
connection): Redis Cluster and the embedded store use the client as it is
(:func:`link_for` returns None for them).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import hiredis
import redis
from redis.commands.core import Script
from redis.exceptions import InvalidResponse, NoScriptError, ReadOnlyError, RedisError

from service.library_internals import connection_socket, redis_reply_error
from service.store.bounded import Bounded
from service.store.budget import wait_for
from service.store.sentinel import is_sentinel_connection, primary_address

READ_SIZE = 65536
"""Bytes asked of the socket per read (a game document is a few KB)."""

Command = tuple[Any, ...]
ScriptCall = Callable[..., Any]
"""``run(keys=[...], args=[...])``, as a redis-py ``Script`` is called."""

REPLY_ERROR = redis_reply_error()
"""An error reply's redis-py exception, as redis-py's own parsers make it."""


class Link:
    """Round trips over connections of this link's own, made like ``client``'s.

    A call takes an idle connection (or makes one with the client pool's
    class and settings) and puts it back when done.  It holds at most as
    many as the client's pool may (``max_connections``): a call finding them
    all busy waits for one as long as the pool would (``timeout``), within the
    request's budget, then fails as if Redis were unreachable.  A forked child
    drops its parent's idle connections and makes its own.
    """

    def __init__(self, client: redis.Redis) -> None:
        self._pool = client.connection_pool
        self._most = getattr(self._pool, "max_connections", 2**31)
        self._wait: float | None = getattr(self._pool, "timeout", None)
        self._free = threading.BoundedSemaphore(self._most)
        self._idle: list[_Wire] = []
        self._pid = os.getpid()

    def _take(self) -> _Wire:
        if self._pid != os.getpid():  # forked: those sockets are the parent's
            self._idle, self._pid = [], os.getpid()
            self._free = threading.BoundedSemaphore(self._most)
        if not self._free.acquire(timeout=wait_for(self._wait)):
            raise redis.ConnectionError(f"all {self._most} connections to Redis are busy")
        try:
            wire = self._idle.pop()  # atomic: the GIL makes list.pop/append thread-safe
        except IndexError:
            pool = self._pool
            return _Wire(pool.connection_class(**pool.connection_kwargs))
        primary = primary_address(self._pool)  # Sentinel: a failover may have moved it
        if primary is not None and wire.sock is not None and wire.address() != primary:
            wire.conn.disconnect()  # to the old primary: the next use asks the Sentinels
        return wire

    def _give_back(self, wire: _Wire) -> None:
        self._idle.append(wire)
        self._free.release()

    def execute(self, *commands: Command) -> list[Any]:
        """Send ``commands`` in one round trip; their replies, in order.

        An error reply raises (the first one, once every reply is read, so the
        connection stays in step); a connection error or timeout is retried
        on a new connection as redis-py retries any command.
        """
        wire = self._take()  # outside the retry: a busy link is not retried
        try:
            payload = b"".join([hiredis.pack_command(command) for command in commands])
            return wire.conn.retry.call_with_retry(  # type: ignore[no-any-return]
                lambda: wire.round_trip(payload, len(commands)),
                lambda _error: wire.conn.disconnect(),
            )
        finally:
            self._give_back(wire)

    def script(self, script: Script) -> ScriptCall:
        """``script`` run by ``EVALSHA`` over this link (loaded through the client
        when Redis does not know it yet, e.g. after a restart)."""

        def run(keys: Sequence[Any], args: Sequence[Any]) -> Any:
            try:
                return self.execute(("EVALSHA", script.sha, len(keys), *keys, *args))[0]
            except NoScriptError:
                return script(keys=keys, args=args)

        return run


class _Wire:
    """A redis-py ``Connection`` and the hiredis reader of its current socket."""

    __slots__ = ("bounded", "conn", "reader", "sock", "used")

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.bounded = isinstance(conn, Bounded)  # the request's budget, the server's circuit
        self.reader: Any = None
        self.sock: socket.socket | None = None
        self.used = 0.0

    def address(self) -> tuple[str, int]:
        return str(self.conn.host), int(self.conn.port)

    def round_trip(self, payload: bytes, count: int) -> list[Any]:
        conn = self.conn
        interval = conn.health_check_interval
        if interval and self.sock is not None and time.monotonic() - self.used > interval:
            conn.check_health()  # PING through redis-py (which reconnects if it must)
        if not conn.is_connected:
            conn.connect()  # the handshake (AUTH, SELECT...) is redis-py's
        current = connection_socket(conn)
        if self.sock is not current:  # a new socket: a new reader, empty
            self.sock = current
            self.reader = hiredis.Reader(protocolError=InvalidResponse, replyError=REPLY_ERROR)
        sock, reader = self.sock, self.reader
        assert sock is not None
        replies: list[Any] = []
        bounded = self.bounded
        wait = conn.wait_now() if bounded else conn.socket_timeout
        try:
            sock.settimeout(wait)
            sock.sendall(payload)
            while len(replies) < count:
                reply = reader.gets()
                if reply is False:
                    chunk = sock.recv(READ_SIZE)
                    if not chunk:
                        raise redis.ConnectionError("Connection closed by server.")
                    reader.feed(chunk)
                    if bounded:
                        sock.settimeout(wait := conn.wait_now())
                else:
                    replies.append(reply)
        except OSError as exc:  # socket.timeout among them
            timed_out = isinstance(exc, TimeoutError)
            if bounded:
                conn.report(wait, timed_out)
            if timed_out:
                raise redis.TimeoutError(f"Timeout talking to Redis: {exc}") from exc
            raise redis.ConnectionError(f"Error talking to Redis: {exc}") from exc
        if bounded:
            conn.circuit.succeeded()
        self.used = time.monotonic()
        # every reply was read: the connection is still in step.  Any error reply
        # raises, not only a ResponseError: LOADING (a restarted Redis reading its
        # AOF) parses to BusyLoadingError, a ConnectionError, which is retried and
        # then means "unavailable", as it does through redis-py itself
        errors = [r for r in replies if isinstance(r, RedisError)]
        if errors:
            if isinstance(errors[0], ReadOnlyError) and is_sentinel_connection(conn):
                # a demoted primary, as redis-py treats it: reconnect to the one the
                # Sentinels name now (nothing was written: retrying is safe)
                conn.disconnect()
                raise redis.ConnectionError("the primary was demoted to a replica")
            raise errors[0]
        return replies


def link_for(client: Any) -> Link | None:
    """A :class:`Link` for a plain ``redis.Redis`` client; None for a Redis
    Cluster client or the embedded store (they are used as they are)."""
    return Link(client) if type(client) is redis.Redis else None
