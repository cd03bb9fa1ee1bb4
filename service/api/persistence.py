"""Loading and saving games for the handlers: auth, conditional requests,
idempotency keys and the optimistic-concurrency write loop.

A change is one read (the game, plus any idempotency record, in one round
trip) and one atomic conditional write (:meth:`GameStore.commit`).  A write
that loses a race is retried on the fresh state when the client did not send
``If-Match``; with ``If-Match`` it answers 412.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from flask import Response

from service.api.answers import Answer, json_answer, not_modified_answer, raw_json_answer
from service.api.context import Call, call, store
from service.api.etags import STAR, parse_tags, version_of
from service.api.problems import ApiError
from service.engine.records import Event
from service.hosting.document import saved_public_view
from service.hosting.record import GameRecord
from service.hosting.timers import apply_timeouts
from service.hosting.tokens import hash_token
from service.store import GameNotFound, IdempotentReplay, VersionConflict

MAX_ATTEMPTS = 4
IDEMPOTENCY_KEY_MAX = 255

SECRET_KEY_MIN_BITS = 128
"""The least a key of a request without a bearer token must carry (see :func:`key_bits`)."""

_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")


def json_response(
    body: Any,
    status: int = 200,
    *,
    version: int | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """A JSON ``Response`` dumped with orjson; ``version`` adds the ETag."""
    return json_answer(body, status, version=version, headers=headers).response()


def bearer_token(current: Call | None = None) -> str | None:
    """The bearer token of ``current`` (default: the request being answered), if any."""
    header = (current or call()).header("Authorization") or ""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def unauthorized(detail: str) -> ApiError:
    """The 401 to raise; counted against the client's address first, so that an
    address sending bogus tokens is answered 429 once over its limit."""
    current = call()
    if current.services.count_auth_failure is not None:
        current.services.count_auth_failure(current)  # raises 429 over the limit
    return ApiError("UNAUTHORIZED", detail, headers={"WWW-Authenticate": 'Bearer realm="games"'})


def require_seat(record: GameRecord) -> int:
    """The seat proven by the request's bearer token, or 401."""
    token = bearer_token()
    if token is None:
        raise unauthorized("send Authorization: Bearer <token> for your seat")
    seat = record.seat_for_token(token)
    if seat is None:
        raise unauthorized("this token does not hold a seat in this game")
    return seat


def not_modified(version: int) -> Answer | None:
    """304 when ``If-None-Match`` names the current version (weak comparison, as
    RFC 9110 has it for this header) or is ``*``; a malformed header is ignored."""
    header = call().header("If-None-Match")
    if not header:
        return None
    # a client echoing the ETag it was given sends exactly it: no parsing then
    if header == f'"{version}"':
        return not_modified_answer(version)
    tags = parse_tags(header)
    if tags == STAR or (
        isinstance(tags, list) and any(version_of(opaque) == version for _weak, opaque in tags)
    ):
        return not_modified_answer(version)
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


def snapshot(record: GameRecord, version: int) -> dict[str, Any]:
    """What is saved beside the document at ``version``: the public view, ready
    to send but for the results (``GET /v1/games/{id}`` then needs no document),
    every seat's part of its view (nor does ``GET /view``), the deadline, and the
    results when they changed."""
    return {
        "public": record.public_json(version),
        "deadline": record.deadline,
        "results": record.results_to_save(),
        "seat_parts": record.seat_parts_json(version),
    }


def events_payload(events: list[Event]) -> list[tuple[bytes, int | None]]:
    return [(orjson.dumps(e.to_dict()), e.seat) for e in events]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an operation produced: the events and the answer to give, which is
    either ``seat``'s view at the new version or what ``build`` makes."""

    events: list[Event]
    build: Callable[[int], tuple[int, Any]] | None = None  # new version -> (status, body)
    headers: dict[str, str] | None = None
    seat: int | None = None  # answer 200 with this seat's view (when build is None)
    committed: Callable[[], None] | None = None
    """Called once the change is saved (not for an attempt lost to a race and
    retried): what must count only changes that happened, such as metrics."""


@dataclass(frozen=True, slots=True)
class Idempotency:
    """An ``Idempotency-Key`` of a request: the hash naming its record, the
    request's fingerprint, and a secret that masks tokens in the saved answer
    (derived from the key itself, which is never stored, so tokens saved for a
    replay are unreadable without the key)."""

    key_hash: str
    fingerprint: bytes
    mask_secret: bytes

    def mask(self, body: Any) -> Any:
        return _map_tokens(
            body, lambda token, i: _xor(token.encode(), self._pad(i, len(token))).hex()
        )

    def unmask(self, body: Any) -> Any:
        return _map_tokens(
            body,
            lambda hexed, i: _xor(bytes.fromhex(hexed), self._pad(i, len(hexed) // 2)).decode(),
        )

    def _pad(self, index: int, length: int) -> bytes:
        return hashlib.shake_256(self.mask_secret + str(index).encode()).digest(length)


def _xor(data: bytes, pad: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, pad, strict=True))


def _map_tokens(body: Any, func: Callable[[str, int], str]) -> Any:
    """Apply ``func`` to the answer's tokens (``token`` at the top or in ``players``)."""
    if not isinstance(body, dict):
        return body
    out = dict(body)
    if isinstance(out.get("token"), str):
        out["token"] = func(out["token"], -1)
    if isinstance(out.get("players"), list):
        out["players"] = [
            {**p, "token": func(p["token"], i)} if isinstance(p.get("token"), str) else p
            for i, p in enumerate(out["players"])
        ]
    return out


def key_bits(key: str) -> int:
    """The random bits a key can hold, judged by its form: 4 a character of a
    hex key (a UUID's hyphens aside), 6 of a base64url one, 0 for anything else
    or for a key of fewer than 8 distinct characters (``aaaa...``, ``0000...``).

    >>> key_bits("3f2b8c4e-9d1a-4f6b-8e2c-7a5d9b1c0e4f")  # a UUID
    128
    >>> key_bits("q8Zr2LxV0nWbT5yKpD3sHc")  # 16 random bytes, base64url
    132
    >>> key_bits("create-game-1"), key_bits("a" * 64), key_bits("a key")
    (78, 0, 0)
    """
    digits = key.replace("-", "")
    if len(set(digits)) < 8:
        return 0
    if _HEX.fullmatch(digits):
        return 4 * len(digits)
    if _BASE64URL.fullmatch(key):
        return 6 * len(key)
    return 0


def idempotency(scope: str, *, secret: bool = False) -> Idempotency | None:
    """The request's ``Idempotency-Key``, scoped (per game and player), if any.

    With ``secret`` (a request without a bearer token: a create or a join,
    whose answer holds tokens), the key is all that proves a replay is the
    client's own, so it must be a random one of at least
    :data:`SECRET_KEY_MIN_BITS` bits (a UUID, 32 hex digits, 22 base64url
    characters): a guessed key then never yields a token."""
    current = call()
    key = current.header("Idempotency-Key")
    if key is None:
        return None
    if not key or len(key) > IDEMPOTENCY_KEY_MAX:
        raise ApiError("BAD_REQUEST", f"Idempotency-Key must be 1 to {IDEMPOTENCY_KEY_MAX} chars")
    if secret and key_bits(key) < SECRET_KEY_MIN_BITS:
        raise ApiError(
            "WEAK_IDEMPOTENCY_KEY",
            "without a bearer token, Idempotency-Key must be random: a UUID, at least 32 hex "
            "digits or at least 22 base64url characters",
        )
    key_hash = hashlib.sha256(f"{scope}\0{key}".encode()).hexdigest()
    fingerprint = hashlib.sha256(
        current.method.encode() + b"\0" + current.path.encode() + b"\0" + current.body()
    ).digest()
    mask_secret = hashlib.sha256(f"mask\0{scope}\0{key}".encode()).digest()
    return Idempotency(key_hash, fingerprint, mask_secret)


def saved_answer(idem: Idempotency, status: int, body: Any, version: int, **extra: Any) -> bytes:
    """The answer to save for replays, tokens masked."""
    return orjson.dumps({"status": status, "body": idem.mask(body), "version": version, **extra})


def replay(idem: Idempotency, fingerprint: bytes, raw: bytes) -> Answer:
    """Answer again what was answered first, or 422 if the key was used otherwise."""
    if fingerprint != idem.fingerprint:
        raise ApiError(
            "IDEMPOTENCY_KEY_REUSED",
            "this Idempotency-Key was used with a different request",
        )
    saved = orjson.loads(raw)
    return json_answer(
        idem.unmask(saved["body"]),
        saved["status"],
        version=saved.get("version"),
        headers={**(saved.get("headers") or {}), "Idempotent-Replayed": "true"},
    )


def scope_for(record_token: str | None, game_id: str) -> str:
    return f"{game_id}\0{hash_token(record_token) if record_token else ''}"


def change(
    game_id: str,
    operation: Callable[[int, GameRecord], Outcome],
    *,
    conditional: bool = False,
) -> Answer:
    """Load, run ``operation``, commit atomically; retry lost races.

    ``operation(version, record)`` mutates the record and returns the events
    and a builder of the answer.  With ``conditional`` the request's
    ``If-Match`` is honoured (412 when stale).
    """
    st = store()
    expected = if_match_version() if conditional else None
    idem = None
    if call().header("Idempotency-Key") is not None:  # else no token hash to compute
        token = bearer_token()
        idem = idempotency(scope_for(token, game_id), secret=token is None)
    settled = False  # one stretch of overdue turns per request (bounded work)
    for _attempt in range(MAX_ATTEMPTS):
        if idem is not None:
            found, stored = st.load_with_idempotency(game_id, idem.key_hash)
            if stored is not None:
                return replay(idem, *stored)
        else:
            found = st.load_game(game_id)
        if found is None:
            raise GameNotFound(game_id)
        version, raw, results = found
        record = GameRecord.loaded(raw, results)
        if not settled and settle_timeouts(game_id, version, record):
            settled = True
            continue
        if expected is not None and expected != version:
            raise ApiError(
                "PRECONDITION_FAILED",
                f"If-Match names version {expected}, the game is at version {version}",
                current_version=version,
            )
        outcome = operation(version, record)
        new_version = version + 1
        status, body, public, text, seat_parts = _answer_and_public(record, outcome, new_version)
        saved = None
        if idem is not None:
            saved = (
                idem.key_hash,
                idem.fingerprint,
                saved_answer(idem, status, body, new_version),
            )
        try:
            st.commit(
                game_id,
                version,
                record.to_bytes(),
                events_payload(outcome.events),
                idempotency=saved,
                public=public,
                deadline=record.deadline,
                results=record.results_to_save(),
                seat_parts=seat_parts,
            )
        except IdempotentReplay as first:
            assert idem is not None
            return replay(idem, first.fingerprint, first.response)
        except VersionConflict as conflict:
            if expected is not None:
                raise ApiError(
                    "PRECONDITION_FAILED",
                    "the game changed while this move was being applied",
                    current_version=conflict.current_version,
                ) from None
            continue
        if outcome.committed is not None:
            outcome.committed()
        return raw_json_answer(text, status, version=new_version, headers=outcome.headers)
    raise ApiError("CONFLICT", "the game is changing too fast; retry")


def _answer_and_public(
    record: GameRecord, outcome: Outcome, version: int
) -> tuple[int, Any, bytes, bytes, bytes]:
    """``(status, body, public view, answer text, seat parts)`` of an outcome at
    ``version``.

    A seat's view is built with the public view and the seats' parts in one pass
    (:meth:`GameRecord.move_texts`); its body is then the JSON text itself."""
    if outcome.build is None:
        assert outcome.seat is not None
        public, text, seat_parts = record.move_texts(version, outcome.seat)
        return 200, orjson.Fragment(text), public, text, seat_parts
    status, body = outcome.build(version)
    seat_parts = record.seat_parts_json(version)
    return status, body, record.public_json(version), orjson.dumps(body), seat_parts


def public_events(game_id: str) -> list[dict[str, Any]]:
    """Every public event of a game (for bots that track the cards)."""
    return [orjson.loads(raw) for _seq, raw in store().all_events(game_id)]


def settle_timeouts(game_id: str, version: int, record: GameRecord) -> bool:
    """Play an overdue turn (turn timers), or the next stretch of bot moves left by
    the last request, and commit it; True if the game changed (then the caller
    reloads).  Any request touching the game calls this first, once."""
    events = apply_timeouts(record, history=lambda: public_events(game_id))
    if not events:
        return False
    try:
        store().commit(
            game_id,
            version,
            record.to_bytes(),
            events_payload(events),
            **snapshot(record, version + 1),
        )
    except VersionConflict:
        pass  # someone else changed it (perhaps the same timeout): reload
    return True


def current(game_id: str) -> tuple[int, GameRecord]:
    """The game's version and record after any overdue turn was played, or 404."""
    version, record, _public = _settled(game_id, with_public=False)
    return version, record


def current_with_public(game_id: str) -> tuple[int, GameRecord, bytes]:
    """:func:`current`, plus the text of the public view saved with that version,
    results included (``b""`` for a game saved without one, by an old release)."""
    return _settled(game_id, with_public=True)


def _settled(game_id: str, *, with_public: bool) -> tuple[int, GameRecord, bytes]:
    """Load the game (and its saved public view if asked), playing any overdue
    turn first; 404 when there is no game."""
    settled = False  # one stretch of overdue turns per request (bounded work)
    for _attempt in range(MAX_ATTEMPTS):
        if with_public:
            found = store().load_for_view(game_id)
        else:
            game = store().load_game(game_id)
            found = None if game is None else (*game, b"")
        if found is None:
            raise GameNotFound(game_id)
        version, raw, results, public = found
        record = GameRecord.loaded(raw, results)
        if settled or not settle_timeouts(game_id, version, record):
            return version, record, saved_public_view(public, results)
        settled = True
    raise ApiError("CONFLICT", "the game is changing too fast; retry")
