"""Entity tags of conditional headers (``If-Match``, ``If-None-Match``), read strictly.

The service's ETags are ``"<version>.<event id>"``: the game's version and the id of
its last event then (``<seq>.<tag>``, :mod:`service.store.history`), so that one
history's version is never taken for another's.  A header is
read as RFC 9110 says (``*``, or a comma-separated list of ``"opaque"`` or
``W/"opaque"`` tags); a header that is not such a list is *malformed* (None), which
the callers answer for: a move's ``If-Match`` then names no version (412), a
view's ``If-None-Match`` is ignored (200).  No input raises.

>>> parse_tags('"3", W/"4"')
[(False, '3'), (True, '4')]
>>> parse_tags('""'), parse_tags('"3", ""'), parse_tags("*")
([(False, '')], [(False, '3'), (False, '')], '*')
>>> parse_tags("garbage") is None, parse_tags('"1" "2"') is None, parse_tags('"2"x') is None
(True, True, True)
>>> version_of(""), version_of("12"), version_of("+1"), version_of("１")
(None, 12, None, None)
>>> etag(7, Position(27, "5f0c1a2b3c4d5e6f"))
'"7.27.5f0c1a2b3c4d5e6f"'
>>> precondition_of("7.27.5f0c1a2b3c4d5e6f"), precondition_of("7")
((7, Position(seq=27, tag='5f0c1a2b3c4d5e6f')), (7, None))
>>> precondition_of("7.27"), precondition_of("7.x"), precondition_of("")
(None, None, None)
"""

from __future__ import annotations

import re

from service.store.history import Position, event_id, parse_event_id

STAR = "*"

# one entity tag (optional W/, then a quoted opaque string: RFC 9110 etagc), then
# the end of the header or a comma; empty list elements are allowed (RFC 9110, 5.6.1)
_TAG = re.compile(r'[ \t,]*(W/)?"([\x21\x23-\x7e\x80-\xff]*)"[ \t]*(?:,|\Z)')
_REST = re.compile(r"[ \t,]*")
_VERSION = re.compile(r"[0-9]{1,18}")
_TAGGED = re.compile(r"([0-9]{1,18})\.([0-9]{1,18}\.[0-9a-f]{16})")

Tag = tuple[bool, str]  # (weak, opaque)


def parse_tags(header: str) -> list[Tag] | str | None:
    """``"*"``, the header's tags, or None when it is malformed (or empty)."""
    if header.strip(" \t") == STAR:
        return STAR
    tags: list[Tag] = []
    at = 0
    while not _REST.fullmatch(header, at):
        match = _TAG.match(header, at)
        if match is None:
            return None
        tags.append((match.group(1) is not None, match.group(2)))
        at = match.end()
    return tags or None


def version_of(opaque: str) -> int | None:
    """The version a bare opaque tag names (ASCII digits, as a client may write it)."""
    return int(opaque) if _VERSION.fullmatch(opaque) else None


def etag(version: int, last: Position) -> str:
    """The ETag of a game at ``version`` whose last event is ``last``."""
    return f'"{version}.{event_id(last.seq, last.tag or "")}"'


def precondition_of(opaque: str) -> tuple[int, Position | None] | None:
    """The version an opaque tag names and the last event it names with it (None
    for a bare ``<version>``, taken on trust), or None if it is not one."""
    bare = version_of(opaque)
    if bare is not None:
        return bare, None
    match = _TAGGED.fullmatch(opaque)
    if match is None:
        return None
    return int(match.group(1)), parse_event_id(match.group(2))
