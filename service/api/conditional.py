"""Conditional requests: ``If-None-Match`` (304 for a version the client has) and
``If-Match`` (the version a write must find, else 412)."""

from __future__ import annotations

from flask import Response

from service.api.context import call
from service.api.etags import STAR, parse_tags, version_of
from service.api.responses import not_modified_response


def not_modified(version: int) -> Response | None:
    """304 when ``If-None-Match`` names the current version (weak comparison, as
    RFC 9110 has it for this header) or is ``*``; a malformed header is ignored."""
    header = call().header("If-None-Match")
    if not header:
        return None
    # a client echoing the ETag it was given sends exactly it: no parsing then
    if header == f'"{version}"':
        return not_modified_response(version)
    tags = parse_tags(header)
    if tags == STAR or (
        isinstance(tags, list) and any(version_of(opaque) == version for _weak, opaque in tags)
    ):
        return not_modified_response(version)
    return None


def if_match_version() -> int | None:
    """The version named by ``If-Match`` (None without the header, or for ``*``).

    Anything else that is not one strong ``"<version>"`` -- a malformed header,
    an empty or weak tag, several tags -- names no version (-1: answered 412)."""
    header = call().header("If-Match")
    if header is None or not header.strip(" \t"):
        return None
    tags = parse_tags(header)
    if tags == STAR:
        return None
    if not isinstance(tags, list) or len(tags) != 1 or tags[0][0]:
        return -1
    version = version_of(tags[0][1])
    return -1 if version is None else version
