"""The stored game record's document format, and the texts of its views.

A record (:class:`service.hosting.record.GameRecord`) is versioned JSON
(:data:`DOC_FORMAT`); this process writes the format :func:`set_write_format`
chose and reads them all.  A saved view text leaves out the finished rounds'
results, stored apart since format 2, and :func:`with_results` puts them back
without parsing either text.
"""

from __future__ import annotations

import hmac

DOC_FORMAT = 3
"""3: the engine state in its compact form (cards one character each, no second
copy of the options and seed) and the arranged hands' cards the same way; 2:
the results of finished rounds are stored apart from the document (they change
once a round, the document on every move), as in 3; 1 kept them inside."""
READABLE_FORMATS = (1, 2, 3)
DROP_RESULTS = b"-"
"""What :meth:`GameRecord.results_to_save` answers when results stored apart must
go (format 1 is being written again); never a JSON text."""

_write_format = DOC_FORMAT


def set_write_format(doc_format: int) -> None:
    """The document format this process writes (``GAME_FORMAT``): 3, or an older
    one while instances of a release that reads only that one may still load the
    games (2 for the release before this one, 1 for the one before that).  All
    three are always read."""
    global _write_format
    if doc_format not in READABLE_FORMATS:
        raise ValueError(f"unknown game record format {doc_format!r}")
    _write_format = doc_format


def write_format() -> int:
    """The document format this process writes (see :func:`set_write_format`)."""
    return _write_format


def with_results(public: bytes, results: bytes, seat_part: bytes = b"{}") -> bytes:
    """The view text made of :meth:`GameRecord.public_json`, the results' text and
    the JSON of a seat's part (a seat's view), with no parsing.

    >>> with_results(b'{"id":"g"}', b"[]")
    b'{"id":"g","results":[]}'
    >>> with_results(b'{"id":"g"}', b"[]", b'{"seat":1}')
    b'{"id":"g","results":[],"seat":1}'
    """
    tail = b"}" if seat_part == b"{}" else b"," + seat_part[1:]
    return public[:-1] + b',"results":' + results + tail


def with_seat_part(view: bytes, seat_part: bytes) -> bytes:
    """A view text (results included) with the JSON of a seat's part appended:
    that seat's view, with no parsing.

    >>> with_seat_part(b'{"id":"g","results":[]}', b'{"seat":1}')
    b'{"id":"g","results":[],"seat":1}'
    """
    return view[:-1] + b"," + seat_part[1:]


def saved_public_view(public: bytes, results: bytes | None) -> bytes:
    """The public view text as the store keeps it, completed with the results
    stored apart (``results`` None: a format 1 text, which holds its own; an empty
    text, saved by an old release without a public view, stays empty).

    >>> saved_public_view(b'{"id":"g"}', b"[]"), saved_public_view(b'{"id":"g"}', None)
    (b'{"id":"g","results":[]}', b'{"id":"g"}')
    """
    return public if not public or results is None else with_results(public, results)


def seat_parts_text(version: int, parts: list[tuple[str, bytes]]) -> bytes:
    """The text saved beside the public view with the seats' parts of their views
    (``(token hash, seat part JSON)`` of every seat with a token), so that a seat's
    view needs no document: the version it was built for, then a line per seat.

    >>> seat_parts_text(7, [("ab", b'{"seat":0}'), ("cd", b'{"seat":1}')])
    b'7\\nab {"seat":0}\\ncd {"seat":1}'
    """
    return b"\n".join([str(version).encode(), *(h.encode() + b" " + p for h, p in parts)])


def seat_part_for(text: bytes, version: int, digest: str) -> bytes | None:
    """The seat part in :func:`seat_parts_text`'s ``text`` of the token whose hash
    is ``digest``, if it was saved for ``version`` (else None: a view then reads
    the document).  Every line is compared, in constant time.

    >>> text = seat_parts_text(7, [("ab", b'{"seat":0}'), ("cd", b'{"seat":1}')])
    >>> seat_part_for(text, 7, "cd"), seat_part_for(text, 8, "cd"), seat_part_for(text, 7, "ef")
    (b'{"seat":1}', None, None)
    """
    head, _, rest = text.partition(b"\n")
    if not rest or head != str(version).encode():
        return None
    wanted = digest.encode()
    found = None
    for line in rest.split(b"\n"):
        token_hash, _, part = line.partition(b" ")
        if hmac.compare_digest(token_hash, wanted):
            found = part
    return found
