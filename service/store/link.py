"""The hot path to Redis: idle connections of its own, without the client's per-call machinery.

redis-py's ``Redis.execute_command`` wraps every command in a connection-pool
checkout and release, a retry closure, event dispatch and (since 8.x)
observability hooks: measured here at about 70 µs of CPU per command, more
than the command's own socket work (``bench/redis_link_bench.py``).  The
requests a game client repeats -- views and moves -- cost one or two round
trips each, so :class:`Link` sends those commands (``HMGET``, a pipeline of
them, ``EVALSHA``) straight over an idle connection of its own.

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
from collections.abc import Callable, Sequence
from typing import Any

import redis
from redis.commands.core import Script
from redis.exceptions import NoScriptError, ResponseError

Command = tuple[Any, ...]
ScriptCall = Callable[..., Any]
"""``run(keys=[...], args=[...])``, as a redis-py ``Script`` is called."""


class Link:
    """Round trips over connections of this link's own, made like ``client``'s.

    A call takes an idle connection (or makes one with the client pool's
    class and settings) and puts it back when done: as many connections as
    calls run at once, whether the server keeps its threads (gunicorn's
    gthread) or starts one per request.  A forked child drops its parent's
    idle connections and makes its own.
    """

    def __init__(self, client: redis.Redis) -> None:
        self._pool = client.connection_pool
        self._idle: list[Any] = []
        self._pid = os.getpid()

    def _take(self) -> Any:
        if self._pid != os.getpid():  # forked: those sockets are the parent's
            self._idle, self._pid = [], os.getpid()
        try:
            return self._idle.pop()  # atomic: the GIL makes list.pop/append thread-safe
        except IndexError:
            pool = self._pool
            return pool.connection_class(**pool.connection_kwargs)

    def execute(self, *commands: Command) -> list[Any]:
        """Send ``commands`` in one round trip; their replies, in order.

        An error reply raises (the first one, once every reply is read, so the
        connection stays in step); a connection error or timeout is retried
        on a new connection as redis-py retries any command.
        """
        conn = self._take()
        try:
            packed = conn.pack_commands(commands)
            return conn.retry.call_with_retry(  # type: ignore[no-any-return]
                lambda: _round_trip(conn, packed, len(commands)),
                lambda _error: conn.disconnect(),
            )
        finally:
            self._idle.append(conn)

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
