"""Telling one history of a game from another: the tag of every event.

When Redis comes back with less than it acknowledged (an ``everysec`` AOF tail
lost, a failover to a lagging replica, an older snapshot restored), the game's
next writes reuse seqs and versions for other moves.  So that no client takes
one history for the other, every event carries a *tag* of 16 hex digits, kept
with it in the stream (field ``g``) and sent with its seq as its id,
``<seq>.<tag>`` (:func:`event_id`):

* 8 hex of a keyed BLAKE2s digest chaining the history -- the digest of event
  n is ``H(key, digest of event n-1 + its seat + its JSON)`` -- computed here
  before the write (:func:`link`).  The key is the game's own, made with it
  and kept in its state hash (``k``), never sent: a digest tells nothing about
  the private events it covers.  The last full digest is the chain's head
  (``h``), read with the document and handed back to the commit, which only
  succeeds at the version it was read at.
* 8 hex *epoch*: which Redis server wrote the event, and in which replication
  history -- a digest of its ``run_id`` (new at each start) and
  ``master_replid`` (new at each promotion), read inside the write script
  (:mod:`service.store.scripts`).  The embedded store's epoch is
  :data:`EMBEDDED_EPOCH` (one process: nothing to roll back to).

Tags are stored, never recomputed: a Redis restarted with all its data gives
new events another epoch, and the old ones keep theirs, so ids given before the
restart stay valid.  :mod:`service.store.divergence` finds the last event two
histories share.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from hashlib import blake2s
from typing import NamedTuple

from service.store.script_args import StoredEvent

DIGEST_HEX = 8
"""Hex digits of the chained digest in a tag (its first half)."""

EPOCH_HEX = 8
"""Hex digits of the epoch in a tag (its second half)."""

TAG_HEX = DIGEST_HEX + EPOCH_HEX

EMBEDDED_EPOCH = "0" * EPOCH_HEX
"""The epoch of every event the embedded store writes."""

START = ""
"""The tag of seq 0 -- before the first event, which every history shares."""

_ID = re.compile(r"([0-9]{1,18})(?:\.([0-9a-f]{16}))?")


class Chain(NamedTuple):
    """What the next write of a game needs to tag its events: the game's key and
    the full digest of its last event (both hex; ``""`` before the first)."""

    key: str
    head: str


def new_chain() -> Chain:
    """The chain of a new game: a fresh secret key, no events yet."""
    return Chain(secrets.token_hex(16), "")


def link(chain: Chain, events: Sequence[StoredEvent]) -> tuple[list[str], str]:
    """The digest part of each event's tag (``DIGEST_HEX`` hex), and the new head.

    >>> digests, head = link(Chain("00" * 16, ""), [b'{"type":"a"}', (b'{}', 1)])
    >>> [len(d) for d in digests], len(head), head.startswith(digests[-1])
    ([8, 8], 64, True)
    >>> link(Chain("00" * 16, ""), [b'{}'])[0] != link(Chain("01" * 16, ""), [b'{}'])[0]
    True
    """
    key = bytes.fromhex(chain.key)
    head = chain.head
    digests = []
    for event in events:
        body, seat = (event, None) if isinstance(event, bytes) else event
        owner = b"" if seat is None else str(int(seat)).encode()
        head = blake2s(bytes.fromhex(head) + owner + b"\n" + body, key=key).hexdigest()
        digests.append(head[:DIGEST_HEX])
    return digests, head


def epoch_of(tag: str) -> str:
    """The epoch half of a tag."""
    return tag[DIGEST_HEX:]


def event_id(seq: int, tag: str) -> str:
    """An event's id as clients see it: ``"<seq>.<tag>"``; ``"0"`` before the first.

    >>> event_id(27, "5f0c1a2b3c4d5e6f"), event_id(0, "")
    ('27.5f0c1a2b3c4d5e6f', '0')
    """
    return f"{seq}.{tag}" if tag else str(seq)


class Position(NamedTuple):
    """A point of a game's history a client names: a seq and the tag of its event
    (None: a bare seq, taken on trust -- no check that the history is the same)."""

    seq: int
    tag: str | None

    def as_shared(self) -> dict[str, int | str]:
        """This point as a reset or a ``HISTORY_DIVERGED`` problem names the last
        one both histories share: ``shared_seq`` and ``shared_id``.

        >>> Position(4, "5f0c1a2b00000000").as_shared()
        {'shared_seq': 4, 'shared_id': '4.5f0c1a2b00000000'}
        """
        return {"shared_seq": self.seq, "shared_id": event_id(self.seq, self.tag or "")}


def parse_event_id(text: str) -> Position | None:
    """The position an event id names (``"27.5f0c1a2b3c4d5e6f"``, or a bare seq
    ``"27"``), or None if it is not one.

    >>> parse_event_id("27.5f0c1a2b3c4d5e6f"), parse_event_id("3")
    (Position(seq=27, tag='5f0c1a2b3c4d5e6f'), Position(seq=3, tag=None))
    >>> parse_event_id("3."), parse_event_id("3.5F0C1A2B3C4D5E6F"), parse_event_id("-1")
    (None, None, None)
    """
    match = _ID.fullmatch(text)
    if match is None:
        return None
    return Position(int(match.group(1)), match.group(2))
