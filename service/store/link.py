"""The hot path to Redis: each thread's own connection, without the client's per-call machinery.

redis-py's ``Redis.execute_command`` wraps every command in a connection-pool
checkout and release, a retry closure, event dispatch and (since 8.x)
observability hooks: measured here at about 70 µs of CPU per command, more
than the command's own socket work (``bench/redis_link_bench.py``).  The
requests a game client repeats -- views and moves -- cost one or two round
trips each, so :class:`Link` sends those commands (``HMGET``, a pipeline of
them, ``EVALSHA``) over a connection the calling thread keeps for itself.

Everything that matters is still redis-py's: the ``Connection`` (packing,
hiredis parsing, timeouts, health checks, reconnecting) and its ``Retry``
(the same retries and backoff as every other command; a re-sent write is
recognised by its write id, see :mod:`service.store.game_store`).  Errors are
redis-py's exceptions, translated by the caller like any other.

Only for a plain ``redis.Redis``: Redis Cluster and the embedded store use the
client as it is (:func:`link_for` returns None for them).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import redis
from redis.commands.core import Script
from redis.exceptions import NoScriptError, ResponseError

Command = tuple[Any, ...]
ScriptCall = Callable[..., Any]
"""``run(keys=[...], args=[...])``, as a redis-py ``Script`` is called."""


class Link:
    """Round trips over the calling thread's own connection from ``client``'s pool.

    A connection is taken from the pool the first time a thread (of this
    process: a forked child takes its own) sends a command, and kept for the
    thread's life; a gthread worker has a fixed set of threads, so a worker
    holds at most that many connections, as it would under load anyway.
    """

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._pool = client.connection_pool
        self._local = threading.local()

    def _connection(self) -> Any:
        held = getattr(self._local, "held", None)
        pid = os.getpid()
        if held is None or held[0] != pid:
            held = self._local.held = (pid, self._pool.get_connection())
        return held[1]

    def execute(self, *commands: Command) -> list[Any]:
        """Send ``commands`` in one round trip; their replies, in order.

        An error reply raises (the first one, once every reply is read, so the
        connection stays in step); a connection error or timeout is retried
        on a new connection as redis-py retries any command.
        """
        conn = self._connection()
        packed = conn.pack_commands(commands)
        return conn.retry.call_with_retry(  # type: ignore[no-any-return]
            lambda: _round_trip(conn, packed, len(commands)),
            lambda _error: conn.disconnect(),
        )

    def script(self, script: Script) -> ScriptCall:
        """``script`` run by ``EVALSHA`` over this link (loaded through the client
        when Redis does not know it yet, e.g. after a restart)."""

        def run(keys: Sequence[Any], args: Sequence[Any]) -> Any:
            try:
                return self.execute(("EVALSHA", script.sha, len(keys), *keys, *args))[0]
            except NoScriptError:
                return script(keys=keys, args=args)

        return run


def _round_trip(conn: Any, packed: list[bytes], count: int) -> list[Any]:
    conn.send_packed_command(packed)
    replies: list[Any] = []
    error: ResponseError | None = None
    for _ in range(count):
        try:
            replies.append(conn.read_response())
        except ResponseError as exc:  # read the others before raising
            error = error or exc
            replies.append(exc)
    if error is not None:
        raise error
    return replies


def link_for(client: Any) -> Link | None:
    """A :class:`Link` for a plain ``redis.Redis`` client; None for a Redis
    Cluster client or the embedded store (they are used as they are)."""
    return Link(client) if type(client) is redis.Redis else None
