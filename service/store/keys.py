"""Every Redis key of the service is built here, by :func:`key`.

All keys of one game share the Redis Cluster hash tag ``{<game_id>}``, so they
live in one slot and a single Lua script may touch all of them.

>>> key("g1", STATE)
't13:{g1}:state'
>>> key("g1", IDEM)
't13:{g1}:idem'
>>> wake_channel("g1"), game_of_channel("t13:{g1}:wake")
('t13:{g1}:wake', 'g1')
>>> key("g{1}", STATE)
Traceback (most recent call last):
...
ValueError: game id must be non-empty and free of '{', '}' and ':', got 'g{1}'
"""

from __future__ import annotations

import hashlib

PREFIX = "t13"

STATE = "state"
"""Hash: ``v`` version (int), ``d`` document (versioned JSON bytes), ``s`` last event seq,
``p`` the public view at that version (JSON, ready to send), ``t`` the turn deadline
("" when none)."""

EVENTS = "events"
"""Stream with ids ``<seq>-0``; fields ``seat`` ("" = public, "N" = seat N only) and ``e``."""


IDEM = "idem"
"""Hash: the game's idempotency records, two fields a key -- ``<hash>:f`` the request's
fingerprint, ``<hash>:r`` the response (see :func:`idem_fields`)."""

IDEM_ORDER = "idem-order"
"""List: the key hashes of :data:`IDEM`, oldest first (the oldest is dropped past the
game's limit)."""


WAKE = "wake"
"""Sharded pub/sub channel: every write publishes the game's last event seq on it
(see :mod:`service.store.wakeups`).  In the game's slot, like its keys."""

TICKET = "ticket"
"""String ``t13:{id}:ticket:<hash>``: the seat a stream ticket proves, until its one use."""


def ticket_key(game_id: str, ticket: str) -> str:
    """The key of a stream ticket: its SHA-256, not the ticket itself.

    >>> ticket_key("g1", "abc")[:24]
    't13:{g1}:ticket:ba7816bf'
    """
    return key(game_id, f"{TICKET}:{hashlib.sha256(ticket.encode()).hexdigest()}")


def wake_channel(game_id: str) -> str:
    """The channel a write to ``game_id`` publishes its last event seq on."""
    return key(game_id, WAKE)


def game_of_channel(channel: str) -> str:
    """The game id of a :func:`wake_channel`."""
    return channel[len(PREFIX) + 2 : channel.rindex("}")]


def idem_fields(key_hash: str) -> tuple[str, str]:
    """The fields of :data:`IDEM` holding a key's fingerprint and response.

    >>> idem_fields("ab12")
    ('ab12:f', 'ab12:r')
    """
    return f"{key_hash}:f", f"{key_hash}:r"


def key(game_id: str, part: str) -> str:
    """The Redis key of ``part`` of game ``game_id``: ``t13:{<game_id>}:<part>``."""
    if not game_id or "{" in game_id or "}" in game_id or ":" in game_id:
        raise ValueError(
            f"game id must be non-empty and free of '{{', '}}' and ':', got {game_id!r}"
        )
    return f"{PREFIX}:{{{game_id}}}:{part}"


LOBBY_SHARDS = 16
"""The lobby's listing of each status is split in this many shards, each a key
pair of its own hash slot (:func:`lobby_key`): its writes spread over the
cluster, and a listing reads every shard.  Changing it moves every game's
shard: a deployment keeps it."""


def lobby_shard(game_id: str) -> int:
    """The shard of the lobby's listing that holds ``game_id``.

    >>> 0 <= lobby_shard("g1") < LOBBY_SHARDS
    True
    """
    return hashlib.sha256(game_id.encode()).digest()[0] % LOBBY_SHARDS


def lobby_key(status: str, shard: int, part: str) -> str:
    """A key of shard ``shard`` of the lobby's listing of ``status`` games: ``games``
    (sorted set of ``<created ms>:<id>``) or ``meta`` (hash id -> ruleset, seats,
    expiry); both of one shard share a hash tag.

    >>> lobby_key("waiting", 3, "games")
    't13:lobby:{waiting.3}:games'
    """
    return f"{PREFIX}:lobby:{{{status}.{shard}}}:{part}"


def table_key(table: str, part: str) -> str:
    """A key of a quick-join table (:func:`service.hosting.lobby.table_of`):
    ``open`` (sorted set of its waiting games with seats to offer, by creation)
    or ``free`` (hash game -> seats still to offer); both share a hash tag.

    >>> table_key("ab12", "open")
    't13:seek:{ab12}:open'
    """
    return f"{PREFIX}:seek:{{{table}}}:{part}"


def quick_join_key(key_hash: str) -> str:
    """The game a quick-join keyed with ``key_hash`` (its ``Idempotency-Key``'s
    hash) seated its client in, where that answer's idempotency record is.

    >>> quick_join_key("ab12")
    't13:quick-join:{ab12}'
    """
    return f"{PREFIX}:quick-join:{{{key_hash}}}"
