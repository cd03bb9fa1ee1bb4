"""Every Redis key of the service is built here, by :func:`key`.

All keys of one game share the Redis Cluster hash tag ``{<game_id>}``, so they
live in one slot and a single Lua script may touch all of them.

>>> key("g1", STATE)
't13:{g1}:state'
>>> key("g1", IDEM)
't13:{g1}:idem'
>>> key("g{1}", STATE)
Traceback (most recent call last):
...
ValueError: game id must be non-empty and free of '{', '}' and ':', got 'g{1}'
"""

from __future__ import annotations

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
