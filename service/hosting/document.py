"""What the store keeps of a hosted game: the record's document format
(:data:`DOC_FORMAT`, checked when a document is read), and the texts of the
views saved beside it.

The saved view texts leave out the finished rounds' results, stored apart (they
change once a round, the document on every move); :func:`with_results` puts
them back without parsing either text.

There is one document format.  When a second one is needed, the way to roll it
out is written down in ``docs/PRODUCTION.md`` (rolling upgrades).
"""

from __future__ import annotations

import hmac

from service.engine.errors import StateFormatError

DOC_FORMAT = 3
"""The document's format number (``"f"``): the engine state in its compact form
(cards one character each, no second copy of the options and seed), the arranged
hands' cards the same way, the results of finished rounds stored apart."""


def check_format(doc_format: object) -> None:
    """Refuse a document of any format but :data:`DOC_FORMAT`.

    >>> check_format(3)
    >>> check_format(2)
    Traceback (most recent call last):
    ...
    service.engine.errors.StateFormatError: unknown game document format 2 (this release reads 3)
    """
    if doc_format != DOC_FORMAT:
        raise StateFormatError(
            f"unknown game document format {doc_format!r} (this release reads {DOC_FORMAT})"
        )


def with_results(public: bytes, results: bytes, seat_part: bytes = b"{}") -> bytes:
    """The view text made of the saved public view
    (:func:`~service.hosting.game_views.public_json`), the results' text and
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
