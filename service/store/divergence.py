"""The last event two histories of a game share (see :mod:`service.store.history`).

A client names a point of the game's history: seq ``s`` and the tag ``t`` of
its event.  The game's history is continuous with the client's iff it has
event ``s`` with tag ``t`` (the digest in a tag chains every event before).
Otherwise the client saw a history the game no longer has, and must be told
the last point both share, *conservatively*: a point claimed shared that is
not would make the client miss events, while a point too early only makes it
re-read some.

What the epochs say: one Redis server in one replication history (one epoch)
writes a game's events one after the other, each on top of the last -- its
history only grows.  So if the game's history has events of the client's
epoch ``E`` at or before ``s``, the last of them, ``p``, was written by the
same server before it wrote the client's event ``s``: events ``1..p`` are in
the client's history too.  When the game's history breaks that rule -- an
event of epoch ``E`` at ``s`` with another digest, or after ``s``, or epoch
``E`` in two separate runs (which only data restored into a running server
makes) -- nothing can be vouched for: the shared point is 0, everything is
read again.  So it is when no event of epoch ``E`` is left (the whole epoch
lost: a failover to a replica that had none of it).
"""

from __future__ import annotations

from collections.abc import Sequence

from service.store.history import epoch_of


def continuous(tags: Sequence[str], seq: int, tag: str) -> bool:
    """Whether the history whose event ``n`` has tag ``tags[n - 1]`` has event
    ``seq`` with ``tag`` (seq 0, before the first event, every history has).

    >>> continuous(["aaaaaaaa11111111"], 1, "aaaaaaaa11111111"), continuous([], 0, "")
    (True, True)
    >>> continuous(["aaaaaaaa11111111"], 1, "bbbbbbbb11111111"), continuous([], 1, "x")
    (False, False)
    """
    if seq == 0:
        return True
    return seq <= len(tags) and tags[seq - 1] == tag


def shared_point(tags: Sequence[str], seq: int, tag: str) -> int:
    """The last seq that the history whose event ``n`` has tag ``tags[n - 1]``
    surely shares with a client's history whose event ``seq`` has ``tag``:
    ``seq`` itself if they are continuous, else an earlier one (0: none known).

    >>> e, f = "11111111", "22222222"
    >>> shared_point(["a" * 8 + e, "b" * 8 + e, "c" * 8 + f], 4, "d" * 8 + e)
    2
    >>> shared_point(["a" * 8 + e, "b" * 8 + e], 2, "b" * 8 + e)
    2
    """
    if continuous(tags, seq, tag):
        return seq
    epoch = epoch_of(tag)
    mine = [n for n, found in enumerate(tags, 1) if epoch_of(found) == epoch]
    if not mine or mine[-1] >= seq or mine[-1] - mine[0] != len(mine) - 1:
        return 0
    return mine[-1]
