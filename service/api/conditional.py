"""Conditional requests: ``If-None-Match`` (304 for the state a client has) and
``If-Match`` (the state a write must find, else 412).

An ETag names a version and the game's last event then (:mod:`service.api.etags`);
a bare ``"<version>"`` (typed by hand) is taken on trust, matched by version alone."""

from __future__ import annotations

from flask import Response

from service.api.context import call
from service.api.etags import STAR, etag, parse_tags, precondition_of
from service.api.responses import not_modified_response
from service.hosting.write_loop import Precondition
from service.store.history import Position

NO_STATE: Precondition = (-1, None)
"""``If-Match`` that names no state of the game (answered 412)."""


def not_modified(version: int, last: Position) -> Response | None:
    """304 when ``If-None-Match`` names the game's current state (weak comparison,
    as RFC 9110 has it for this header), or is ``*``; a malformed header is
    ignored.  A tag from another history (the same version, another last event)
    does not match: the client gets the game as it is."""
    header = call().header("If-None-Match")
    if not header:
        return None
    current = etag(version, last)
    # a client echoing the ETag it was given sends exactly it: no parsing then
    if header == current:
        return not_modified_response(current)
    tags = parse_tags(header)
    if tags == STAR or (
        isinstance(tags, list) and any(_names(opaque, version, last) for _weak, opaque in tags)
    ):
        return not_modified_response(current)
    return None


def _names(opaque: str, version: int, last: Position) -> bool:
    named = precondition_of(opaque)
    if named is None or named[0] != version:
        return False
    return named[1] is None or named[1] == last


def if_match() -> Precondition | None:
    """What ``If-Match`` names (None without the header, or for ``*``).

    Anything else that is not one strong ETag of the service's (or a bare
    version) -- a malformed header, an empty or weak tag, several tags -- names
    no state (:data:`NO_STATE`: answered 412)."""
    header = call().header("If-Match")
    if header is None or not header.strip(" \t"):
        return None
    tags = parse_tags(header)
    if tags == STAR:
        return None
    if not isinstance(tags, list) or len(tags) != 1 or tags[0][0]:
        return NO_STATE
    named = precondition_of(tags[0][1])
    return NO_STATE if named is None else named
