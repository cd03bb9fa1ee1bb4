"""Acknowledging a change only once Redis confirms it will last: ``WAIT`` and ``WAITAOF``.

Redis acknowledges a write once its primary has it in memory; replicas and the
append-only file follow asynchronously, so a failover (or a crash with AOF
``everysec``) can lose the last acknowledged changes.  With
``REDIS_WAIT_REPLICAS=N`` and/or ``REDIS_WAIT_AOF=true`` every write the service
acknowledges to a client -- a game's creation and each of its changes (joins,
moves, seat changes, webhook registrations: :meth:`GameStore.create` and
:meth:`GameStore.commit`), a stream ticket -- is sent with, in the same round
trip and on the same connection:

* ``SET t13:{<game>}:sync 1 PX 10000``: a write of the game's own slot, so that
  what follows waits for it, and so for every earlier write of the game (the
  replication stream and the AOF are in order) -- also when the game's own
  write wrote nothing (a retry recognised by its write id, a replay);
* ``WAIT N <timeout>``: the number of replicas that have everything up to it;
* ``WAITAOF 1 0 <timeout>``: whether the primary fsynced it to its AOF (Redis >= 7.2).

Short of either, the store raises :class:`~service.store.store_errors.NotDurable`
(503 ``STORE_UNAVAILABLE`` with ``Retry-After``): the change is on the primary
and may or may not last.  Its idempotency record was written by the same
script, so a retry with the same ``Idempotency-Key`` is safe: it finds the
record and is answered it only once that too is confirmed
(:meth:`GameStore.load_with_idempotency` confirms before it returns one), or --
the change lost with the old primary -- is made anew.  On Redis Cluster the
commands go to the node serving the game's slot, over one connection (``WAIT``
counts that node's replicas).  Each confirmation waits at most
``REDIS_WAIT_TIMEOUT_MS``, added to the request's Redis budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis
from redis.cluster import RedisCluster
from redis.commands.core import Script
from redis.exceptions import NoScriptError

from service.config import Config
from service.store import budget, keys
from service.store.store_errors import NotDurable, StoreMisconfigured, StoreUnavailable

BARRIER_MS = 10_000
"""How long the barrier key of a game lives (it is only written, never read)."""

Command = tuple[Any, ...]
"""A Redis command and its arguments, as redis-py's ``execute_command`` takes them."""

Send = Callable[[Sequence[Command]], list[Any]]
"""Sends commands over one connection, in one round trip; their replies (an error
reply raises, once every reply is read)."""


@dataclass(frozen=True, slots=True)
class Durability:
    """What a change must reach before it is acknowledged."""

    replicas: int = 0
    aof: bool = False
    timeout_ms: int = 500

    @classmethod
    def from_config(cls, config: Config) -> Durability:
        return cls(config.redis_wait_replicas, config.redis_wait_aof, config.redis_wait_timeout_ms)

    @property
    def on(self) -> bool:
        return self.replicas > 0 or self.aof

    @property
    def seconds(self) -> float:
        """The most the confirmation of one change may wait, in all."""
        return self.timeout_ms / 1000 * ((self.replicas > 0) + self.aof)

    def commands(self, game_id: str) -> list[Command]:
        """The barrier and the waits, to send after a change of ``game_id``."""
        out: list[Command] = [("SET", keys.key(game_id, keys.SYNC), b"1", "PX", BARRIER_MS)]
        if self.replicas:
            out.append(("WAIT", self.replicas, self.timeout_ms))
        if self.aof:
            out.append(("WAITAOF", 1, 0, self.timeout_ms))
        return out

    def check(self, replies: Sequence[Any]) -> None:
        """Raise :class:`NotDurable` unless ``replies`` (those of :meth:`commands`,
        after the barrier's) confirm the change."""
        at = 1
        if self.replicas:
            got = int(replies[at])
            at += 1
            if got < self.replicas:
                raise NotDurable(
                    f"{got} of {self.replicas} replica(s) confirmed the change within "
                    f"{self.timeout_ms} ms"
                )
        if self.aof and int(replies[at][0]) < 1:
            raise NotDurable(
                f"the primary did not fsync the change to its AOF within {self.timeout_ms} ms"
            )


def send_durably(
    client: Any,
    durability: Durability,
    game_id: str,
    command: Command | None = None,
    script: Script | None = None,
) -> tuple[Any, list[Any]]:
    """Send ``command`` (a write of ``game_id``'s slot; None: only confirm the
    game's earlier writes) and ``durability``'s :meth:`~Durability.commands`, in
    one round trip over one connection (see :func:`sender`): ``command``'s reply
    and the confirmation's replies, for :meth:`Durability.check`.  ``script`` is
    the script an ``EVALSHA`` runs, loaded if Redis lacks it.  Raises redis-py's
    errors."""
    send, load = sender(client, game_id)
    commands = ([] if command is None else [command]) + durability.commands(game_id)
    budget.extend(durability.seconds)
    try:
        replies = send(commands)
    except NoScriptError:
        if script is None:
            raise
        load(script)
        replies = send(commands)
    if command is None:
        return None, replies
    return replies[0], replies[1:]


def sender(client: Any, game_id: str) -> tuple[Send, Callable[[Script], Any]]:
    """How to send commands of ``game_id``'s slot over one connection, and how to
    load a script where they go: on the node serving the slot (Redis Cluster), or
    as a pipeline of ``client``."""
    if isinstance(client, RedisCluster):
        slot = client.keyslot(keys.key(game_id, keys.STATE))

        def on_node(commands: Sequence[Command]) -> list[Any]:
            try:
                return _pipeline(_node_client(client, slot), commands)
            except redis.exceptions.MovedError:  # the slot moved: learn where, once
                client.nodes_manager.initialize()
                return _pipeline(_node_client(client, slot), commands)

        return on_node, lambda s: _node_client(client, slot).script_load(s.script)
    return (lambda commands: _pipeline(client, commands)), (lambda s: client.script_load(s.script))


def _node_client(client: RedisCluster, slot: int) -> Any:
    return client.get_redis_connection(client.nodes_manager.get_node_from_slot(slot))


def _pipeline(client: Any, commands: Sequence[Command]) -> list[Any]:
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    return list(pipe.execute())


def check_support(client: Any, durability: Durability) -> list[str]:
    """Raise :class:`StoreMisconfigured` if ``client``'s Redis (every primary of a
    cluster) cannot confirm what ``durability`` asks; the warnings to log when it
    can but not now (fewer replicas connected than asked for).  Raises
    :class:`StoreUnavailable` if Redis cannot be asked."""
    nodes = (
        [client.get_redis_connection(n) for n in client.get_primaries()]  # type: ignore[no-untyped-call]
        if isinstance(client, RedisCluster)
        else [client]
    )
    warnings = []
    for node in nodes:
        try:
            if durability.aof:
                node.execute_command("WAITAOF", 1, 0, 1)
            replicas = int(node.info("replication").get("connected_slaves", 0))
        except redis.ResponseError as exc:
            if durability.aof and "WAITAOF" in str(exc).upper():
                raise StoreMisconfigured(
                    "REDIS_WAIT_AOF needs WAITAOF, which Redis has from version 7.2 on, "
                    f"with appendonly yes: {exc}"
                ) from exc
            raise StoreUnavailable(f"cannot check the durability settings: {exc}") from exc
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreUnavailable(f"cannot check the durability settings: {exc}") from exc
        if replicas < durability.replicas:
            warnings.append(
                f"REDIS_WAIT_REPLICAS={durability.replicas} but the primary has {replicas} "
                "replica(s) connected: every change will be answered 503 until enough are"
            )
    return warnings
