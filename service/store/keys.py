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
from functools import cache

from redis.crc import key_slot

PREFIX = "t13"

STATE = "state"
"""Hash: ``v`` version (int), ``d`` document (versioned JSON bytes), ``s`` last event seq,
``p`` the public view at that version (JSON, ready to send), ``t`` the turn deadline
("" when none)."""

EVENTS = "events"
"""Stream with ids ``<seq>-0``; fields ``seat`` ("" = public, "N" = seat N only) and ``e``."""


IDEM = "idem"
"""Hash: the game's idempotency records, two fields a key -- ``<hash>:f`` the request's
fingerprint, ``<hash>:r`` the response, ``<hash>:l`` the id of its write's last event
(see :func:`idem_fields`)."""

IDEM_ORDER = "idem-order"
"""List: the key hashes of :data:`IDEM`, oldest first (the oldest is dropped past the
game's limit)."""


WAKE = "wake"
"""Sharded pub/sub channel: every write publishes the game's last event seq on it
(see :mod:`service.store.wakeups`).  In the game's slot, like its keys."""

OUTBOX = "hooks"
"""Stream ``t13:{<slot tag>}:hooks`` (consumer group :data:`OUTBOX_GROUP`): the webhook
deliveries due now of every game in one hash slot (see :func:`outbox_tag`); fields ``h``
the delivery's header (JSON: game, URL, secret, commit time), ``b`` the body, ``a`` the
attempts made."""

OUTBOX_GROUP = "deliver"

OUTBOX_LATER = "hooks-later"
"""Sorted set ``t13:{<slot tag>}:hooks-later``: deliveries waiting for their next attempt,
scored by its time (ms); members are JSON ``{"h", "b", "a"}``."""

HOOK_LOG = "hooks-log"
"""List ``t13:{id}:hooks-log``: the game's delivery attempts (JSON each), oldest first."""

OUTBOX_HINT = f"{PREFIX}:hooks:ready"
"""Pub/sub channel (not sharded: every node of a cluster forwards it): a write that
queued deliveries publishes its slot's number here, waking the delivery workers."""

DUE = "due"
"""Sorted set ``t13:{<slot tag>}:due`` (see :func:`outbox_tag`): the games of one hash slot
with a turn to play -- a bot's, or a turn timer's -- scored by when it is due (ms), member
the game id.  Every write of a game sets its entry from the game's turn deadline in the
same script (none: the entry is removed); the bot workers claim the due ones
(:mod:`service.store.due_games`)."""

BOT_HINT = f"{PREFIX}:bots:ready"
"""Pub/sub channel (not sharded: every node of a cluster forwards it): a write that
leaves a turn due publishes ``"<slot> <due ms>"`` here, waking the bot workers (a bot's
turn, due at once) or setting their timers (a turn timer's)."""

FINISHED = "finished"
"""Sorted set ``t13:{<slot tag>}:finished`` (see :func:`outbox_tag`): the games of one hash
slot that finished and are not archived yet, scored by when they finished (ms) or, once
claimed, by the end of the claim's lease; member the game id.  The write that finishes a
game adds it in the same script; the archivers take it (:mod:`service.store.archives`)."""

ARCHIVE_HINT = f"{PREFIX}:archive:ready"
"""Pub/sub channel (not sharded): the write that finishes a game publishes
``"<slot> <finished ms>"`` here, waking the archivers."""

SLOTS = 16384
"""Hash slots of Redis Cluster."""

REPLAY = "replay"
"""String ``t13:{id}:replay``: the finished game's replay, built once (it never changes),
as versioned JSON ``{"f":1,"r":<replay>}``; it expires with the game's state key."""

SYNC = "sync"
"""String ``t13:{id}:sync``, kept a few seconds: written just before a ``WAIT`` for the
game's changes (see :mod:`service.store.durability`), so the wait covers all of them."""

TICKET = "ticket"
"""String ``t13:{id}:ticket:<hash>``: the seat a stream ticket proves and the hash of the
token that held it then (JSON), until it expires."""


STREAMS = "streams"
"""Sorted sets of the leases of open event streams (:mod:`service.store.stream_leases`):
member a lease's id, score its expiry (ms).  One per seat, ``t13:{id}:streams:<seat>``
(in the game's slot, :func:`seat_streams_key`), and one per client address,
``t13:streams:{<hash of the address>}`` (:func:`address_streams_key`)."""


def seat_streams_key(game_id: str, seat: int) -> str:
    """The leases of the streams open on ``seat`` of ``game_id``.

    >>> seat_streams_key("g1", 2)
    't13:{g1}:streams:2'
    """
    return key(game_id, f"{STREAMS}:{seat}")


def address_streams_key(address: str) -> str:
    """The leases of the streams open from a client address: keyed by a hash of
    it (a bounded key whatever the address, each in a slot of its own).

    >>> address_streams_key("127.0.0.1")
    't13:streams:{12ca17b49af2289436f303e0166030a2}'
    """
    return f"{PREFIX}:{STREAMS}:{{{hashlib.sha256(address.encode()).hexdigest()[:32]}}}"


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


def idem_fields(key_hash: str) -> tuple[str, str, str]:
    """The fields of :data:`IDEM` holding a key's fingerprint, response, and the id
    of its write's last event (its ETag's, :mod:`service.store.history`).

    >>> idem_fields("ab12")
    ('ab12:f', 'ab12:r', 'ab12:l')
    """
    return f"{key_hash}:f", f"{key_hash}:r", f"{key_hash}:l"


@cache
def _slot_tags() -> tuple[str, ...]:
    """For every hash slot, the first tag ``o<n>`` (n = 0, 1, ...) hashing to it."""
    tags: list[str | None] = [None] * SLOTS
    missing, n = SLOTS, 0
    while missing:
        slot = key_slot(f"o{n}".encode())
        if tags[slot] is None:
            tags[slot] = f"o{n}"
            missing -= 1
        n += 1
    return tuple(tag for tag in tags if tag is not None)


def outbox_tag(slot: int) -> str:
    """The hash tag of the webhook outbox of hash slot ``slot``: a tag in that very slot,
    so a write of any game of the slot queues its deliveries in the same atomic script
    (one outbox per slot: no hot key, 16384 at most).  The same in every process.

    >>> slot_of("g1") == key_slot(outbox_tag(slot_of("g1")).encode())
    True
    >>> outbox_tag(0), outbox_key(slot_of("g1"), OUTBOX)
    ('o12934', 't13:{o2790}:hooks')
    """
    return _slot_tags()[slot]


def slot_of(game_id: str) -> int:
    """The hash slot of ``game_id``'s keys."""
    return int(key_slot(game_id.encode()))


def outbox_key(slot: int, part: str) -> str:
    """A key of the webhook outbox of ``slot`` (:data:`OUTBOX`, :data:`OUTBOX_LATER`), its
    set of due games (:data:`DUE`) or of finished games to archive (:data:`FINISHED`).

    >>> outbox_key(0, DUE)
    't13:{o12934}:due'
    """
    return f"{PREFIX}:{{{outbox_tag(slot)}}}:{part}"


def key(game_id: str, part: str) -> str:
    """The Redis key of ``part`` of game ``game_id``: ``t13:{<game_id>}:<part>``."""
    if not game_id or "{" in game_id or "}" in game_id or ":" in game_id:
        raise ValueError(
            f"game id must be non-empty and free of '{{', '}}' and ':', got {game_id!r}"
        )
    return f"{PREFIX}:{{{game_id}}}:{part}"


def archive_key(game_id: str) -> str:
    """String: a finished game's archive (:mod:`service.store.archives`), in the game's
    slot, kept ``ARCHIVE_TTL_SECONDS`` whatever the live keys' TTL.

    >>> archive_key("g1")
    't13:archive:{g1}'
    """
    key(game_id, STATE)  # the same checks of the id
    return f"{PREFIX}:archive:{{{game_id}}}"


def history_key(holder: str, part: str) -> str:
    """A key of one player's history of finished games, tagged by the player's seat
    holder (:func:`service.hosting.players.player_holder`: one per app and player):
    ``games`` (sorted set, every score 0, members ``<finished ms>:<game id>``) or
    ``entries`` (hash game id -> the entry's JSON).

    >>> history_key("p:" + "ab" * 32, "games")
    't13:history:{abababababababababababababababab}:games'
    """
    digest = holder.removeprefix("p:")[:32]
    return f"{PREFIX}:history:{{{digest}}}:{part}"


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
    (sorted set of ``<created ms>:<id>``), ``meta`` (hash id -> ruleset, seats,
    expiry, created ms) or ``seen`` (sorted set of the ``games`` members a seated
    player showed life in, scored by when, ms); all of one shard share a hash tag.

    >>> lobby_key("waiting", 3, "games")
    't13:lobby:{waiting.3}:games'
    """
    return f"{PREFIX}:lobby:{{{status}.{shard}}}:{part}"


def table_key(table: str, part: str) -> str:
    """A key of a quick-join table (:func:`service.hosting.lobby_operations.table_of`):
    ``open`` (sorted set of its waiting games with seats to offer, by creation),
    ``free`` (hash game -> seats still to offer) or ``seen`` (hash game -> when a
    seated player last showed life, ms) or ``skill`` (hash game -> its rated
    players' skills: :mod:`service.store.skill_seek`); all share a hash tag.

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


def address_key(address: str, part: str) -> str:
    """A key of what one client address holds in the lobby (see
    :mod:`service.store.holds`): ``seats`` or ``listed``, both under a hash tag of
    the address's SHA-256 (no address in a key name, and one slot per address).

    >>> address_key("ip:127.0.0.1", "seats")
    't13:addr:{508cc0fe26185d71343b0aaa99a7a8c8}:seats'
    """
    digest = hashlib.sha256(address.encode()).hexdigest()[:32]
    return f"{PREFIX}:addr:{{{digest}}}:{part}"


APPS = f"{PREFIX}:apps"
"""Set: the id of every app (:mod:`service.store.app_registry`), for listing them."""


def app_key(app_id: str) -> str:
    """String: an app's record (versioned JSON: name, key hashes, revoked), one slot
    per app.

    >>> app_key("a1b2c3d4e5")
    't13:app:{a1b2c3d4e5}'
    """
    return f"{PREFIX}:app:{{{app_id}}}"


def app_games_key(app_id: str) -> str:
    """Sorted set: the app's games, for its listing
    (:meth:`~service.store.app_registry.AppRegistry.note_app_game`), in its record's slot.

    >>> app_games_key("a1b2c3d4e5")
    't13:app:{a1b2c3d4e5}:games'
    """
    return f"{app_key(app_id)}:games"


def app_live_games_key(app_id: str) -> str:
    """Sorted set: the app's games not ended (:mod:`service.store.live_games`), in its
    record's slot.

    >>> app_live_games_key("a1b2c3d4e5")
    't13:app:{a1b2c3d4e5}:live'
    """
    return f"{app_key(app_id)}:live"


def player_key(tag: str, part: str = "") -> str:
    """A key of one player of one app, tagged by a hash of both
    (:func:`service.hosting.players.player_tag`): ``""`` the hash of the player's
    tokens (field ``t:<token hash>``) and its bar, ``games`` the sorted set of the
    games where it holds a seat, ``ratings`` (hash) and ``rated`` (sorted set) its
    ratings and the games applied to them (:mod:`service.store.ratings`).

    >>> player_key("ab12"), player_key("ab12", "games")
    ('t13:player:{ab12}', 't13:player:{ab12}:games')
    """
    base = f"{PREFIX}:player:{{{tag}}}"
    return f"{base}:{part}" if part else base


def app_hook_log_key(app_id: str) -> str:
    """List: the attempts of the deliveries to an app's webhook (JSON each, oldest
    first), in the app's slot (:mod:`service.store.app_hook_log`).

    >>> app_hook_log_key("a1b2c3d4e5")
    't13:app:{a1b2c3d4e5}:hooks-log'
    """
    return f"{app_key(app_id)}:{HOOK_LOG}"


def leaderboard_slot(board: str, shard: int, shards: int) -> int:
    """The hash slot of shard ``shard`` of ``shards`` of leaderboard ``board``: the
    board's shards are spaced evenly over the 16384 slots from one the board's name
    chooses, so they spread over a cluster's nodes (which hold ranges of slots).

    >>> [leaderboard_slot("a1b2c3d4e5.classic.2", s, 4) for s in range(4)]
    [8320, 12416, 128, 4224]
    """
    base = int(key_slot(board.encode()))
    return (base + shard * (SLOTS // shards)) % SLOTS


def leaderboard_key(board: str, shard: int, shards: int, part: str) -> str:
    """A key of one shard of a leaderboard (:mod:`service.store.leaderboards`):
    ``ratings`` (sorted set: member a player id, score minus its rating) or ``entries``
    (hash: player id -> ``<rated games>:<changed ms>``).  Both are tagged with the slot tag of
    :func:`leaderboard_slot` (a distinct tag per shard, in a slot of its own), and
    named after the board (``<app>.<ruleset>.<table size>``) and the shard.

    >>> leaderboard_key("a1b2c3d4e5.classic.2", 0, 4, "ratings")
    't13:lb:{o22704}:a1b2c3d4e5.classic.2:0:ratings'
    """
    tag = outbox_tag(leaderboard_slot(board, shard, shards))
    return f"{PREFIX}:lb:{{{tag}}}:{board}:{shard}:{part}"
