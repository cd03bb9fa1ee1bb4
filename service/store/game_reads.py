"""The reads of :class:`~service.store.game_store.GameStore`: views, documents, events.

Each is one round trip (:meth:`GameReads._fetch`, given by the store).  The layout is
:mod:`service.store.game_store`'s.  The reads a request makes first are also
:class:`Read` values (:func:`seat_view_read`, :func:`game_read`), so that a second
read, of another key, can go in the same round trip (:meth:`GameReads.read_both`:
a player's credential checked with its game's read).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from service.store import keys
from service.store.events import MAX_EVENTS_PER_READ, HistoryPage, Page, read_events, read_history
from service.store.failures import translate_errors
from service.store.history import Chain, Position
from service.store.script_args import deadline_of
from service.store.store_errors import GameNotFound, VersionConflict

REPLAY_HEAD = b'{"f":1,"r":'
"""How a saved replay's text begins: its format (1), then the replay (read without parsing)."""

LOADED_FIELDS = ("v", "d", "r", "k", "h", "s", "g")
"""The state hash's fields a write reads (:func:`loaded_game`)."""

SEAT_VIEW_FIELDS = ("v", "t", "p", "r", "q", "s", "g")
"""The state hash's fields a seat's view reads (:meth:`GameReads.load_seat_view`)."""

T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True, slots=True)
class Read(Generic[T]):
    """A read as data: the commands sent in one round trip, and what their replies
    mean.  Two reads are the same read when their commands are equal."""

    commands: tuple[tuple[Any, ...], ...]
    parse: Callable[[list[Any]], T]


class LoadedGame(tuple[int, bytes, bytes | None]):
    """``(version, document, results)`` of a game as a write reads it, and
    :attr:`chain`: what its commit needs to tag its events
    (:mod:`service.store.history`), as it was at that version; :attr:`last`, its
    last event then (what its ETag names)."""

    chain: Chain
    last: Position

    def __new__(
        cls, version: int, doc: bytes, results: bytes | None, chain: Chain, last: Position
    ) -> LoadedGame:
        made = super().__new__(cls, (version, doc, results))
        made.chain, made.last = chain, last
        return made


def last_event(seq: bytes | None, tag: bytes | None) -> Position:
    """The last event the state hash's ``s`` and ``g`` name."""
    return Position(int(seq or 0), (tag or b"").decode())


def loaded_game(found: list[Any]) -> LoadedGame | None:
    """The game the state hash's :data:`LOADED_FIELDS` hold, or None if it has none."""
    version, doc, results, key, head, seq, tag = found
    if version is None or doc is None:
        return None
    chain = Chain((key or b"").decode(), (head or b"").decode())
    return LoadedGame(int(version), doc, results, chain, last_event(seq, tag))


class Written(int):
    """A write's version, and :attr:`last`: the game's last event then (what the
    version's ETag names, :mod:`service.store.history`)."""

    last: Position

    def __new__(cls, version: int, last: Position) -> Written:
        made = super().__new__(cls, version)
        made.last = last
        return made


class Versioned(tuple[Any, ...]):
    """A read of a game's state (a tuple, as each read documents it), and
    :attr:`last`: the game's last event at the version read."""

    last: Position

    def __new__(cls, values: tuple[Any, ...], last: Position) -> Versioned:
        made = super().__new__(cls, values)
        made.last = last
        return made


def seat_view_read(game_id: str) -> Read[Versioned | None]:
    """:meth:`GameReads.load_seat_view` of ``game_id`` as a :class:`Read`."""
    return Read((("HMGET", keys.key(game_id, keys.STATE), *SEAT_VIEW_FIELDS),), _seat_view)


def _seat_view(replies: list[Any]) -> Versioned | None:
    [(version, deadline, public, results, parts, seq, tag)] = replies
    if version is None:
        return None
    found = (int(version), deadline_of(deadline), public or b"", results, parts or b"")
    return Versioned(found, last_event(seq, tag))


def game_read(game_id: str) -> Read[LoadedGame | None]:
    """:meth:`GameReads.load_game` of ``game_id`` as a :class:`Read`."""
    return Read((("HMGET", keys.key(game_id, keys.STATE), *LOADED_FIELDS),), _loaded_game)


def _loaded_game(replies: list[Any]) -> LoadedGame | None:
    [found] = replies
    return loaded_game(found)


class GameReads:
    """The reads of a game store, over :meth:`_fetch`."""

    def _fetch(self, *commands: tuple[Any, ...]) -> list[Any]:
        """Replies to ``commands`` sent in one round trip (given by the store)."""
        raise NotImplementedError

    def read(self, read: Read[T]) -> T:
        """What ``read`` reads (one round trip)."""
        with translate_errors():
            return read.parse(self._fetch(*read.commands))

    def read_both(self, first: Read[T], second: Read[U]) -> tuple[T, U]:
        """What ``first`` and ``second`` read, in one round trip (keys of different
        slots too: a cluster's pipeline sends each node its part at once)."""
        split = len(first.commands)
        with translate_errors():
            replies = self._fetch(*first.commands, *second.commands)
        return first.parse(replies[:split]), second.parse(replies[split:])

    def _confirm_written(self, game_id: str) -> None:
        """Wait until the writes made so far are confirmed, if the store's
        durability asks (given by the store)."""
        raise NotImplementedError

    def load_with_idempotency(
        self, game_id: str, key_hash: str
    ) -> tuple[LoadedGame | None, tuple[bytes, bytes, bytes] | None]:
        """:meth:`load_game` and the idempotency record of ``key_hash``, in one round trip.

        Returns ``(game, record)``: ``(version, document, results)`` or None, and
        ``(fingerprint, response, id of its write's last event)`` or None.
        """
        with translate_errors():
            found, (fingerprint, response, last) = self._fetch(
                ("HMGET", keys.key(game_id, keys.STATE), *LOADED_FIELDS),
                ("HMGET", keys.key(game_id, keys.IDEM), *keys.idem_fields(key_hash)),
            )
        game = loaded_game(found)
        record = None
        if fingerprint is not None and response is not None:
            record = (fingerprint, response, last or b"")
        if record is not None:
            # about to be answered again: only once the write it answers is confirmed
            self._confirm_written(game_id)
        return game, record

    def chain_at(self, game_id: str, version: int) -> Chain:
        """The game's digest chain, read now (for a commit at ``version`` whose
        caller did not read it).  A game behind ``version`` is a
        :class:`VersionConflict` now: it could reach ``version`` before the
        commit, from a chain other than this one.  A game past it is left to the
        commit to refuse (or to answer an idempotent replay)."""
        with translate_errors():
            [(found, key, head)] = self._fetch(
                ("HMGET", keys.key(game_id, keys.STATE), "v", "k", "h")
            )
        if found is None:
            raise GameNotFound(game_id)
        if int(found) < int(version):
            raise VersionConflict(int(found))
        return Chain((key or b"").decode(), (head or b"").decode())

    def load_public(self, game_id: str) -> Versioned | None:
        """``(version, turn deadline, public view, results)`` saved with the last
        change (and its ``last`` event), or None if there is no game (one round
        trip, without the document)."""
        with translate_errors():
            [(version, deadline, public, results, seq, tag)] = self._fetch(
                ("HMGET", keys.key(game_id, keys.STATE), "v", "t", "p", "r", "s", "g")
            )
        if version is None:
            return None
        found = (int(version), deadline_of(deadline), public or b"", results)
        return Versioned(found, last_event(seq, tag))

    def load_version(self, game_id: str) -> Versioned | None:
        """``(version, turn deadline)`` of a game (and its ``last`` event), or None
        if there is none: what a conditional GET needs to answer 304 (one round
        trip of a few bytes)."""
        with translate_errors():
            [(version, deadline, seq, tag)] = self._fetch(
                ("HMGET", keys.key(game_id, keys.STATE), "v", "t", "s", "g")
            )
        if version is None:
            return None
        return Versioned((int(version), deadline_of(deadline)), last_event(seq, tag))

    def load_seat_view(self, game_id: str) -> Versioned | None:
        """:meth:`load_public` plus the seats' parts of their views saved with
        the last change (``b""`` if none were): ``(version, turn deadline,
        public view, results, seat parts)`` (and its ``last`` event), or None if
        there is no game."""
        return self.read(seat_view_read(game_id))

    def load_game(self, game_id: str) -> LoadedGame | None:
        """``(version, document, results)`` of a game (results None when none were
        stored) and its digest chain, or None if there is none (one round trip)."""
        return self.read(game_read(game_id))

    def events(
        self,
        game_id: str,
        after_seq: int = 0,
        seat: int | None = None,
        *,
        limit: int = MAX_EVENTS_PER_READ,
    ) -> Page:
        """Events with seq > ``after_seq`` visible to ``seat`` (None: public only),
        oldest first, the cursor for the next read and the turn deadline, in one
        round trip (see :func:`service.store.events.read_events`).  To wait for
        the next ones, :meth:`watch` the game first.  Raises :class:`GameNotFound`."""
        with translate_errors():
            return read_events(self._fetch, game_id, after_seq, seat, limit)

    def load_replay(self, game_id: str) -> bytes | None:
        """The replay JSON text saved by :meth:`save_replay`, or None (one round trip)."""
        with translate_errors():
            [saved] = self._fetch(("GET", keys.key(game_id, keys.REPLAY)))
        if saved is None or not saved.startswith(REPLAY_HEAD) or not saved.endswith(b"}"):
            return None  # another format: built again (and saved over)
        return bytes(saved[len(REPLAY_HEAD) : -1])

    def history(
        self,
        game_id: str,
        after: Position,
        seat: int | None = None,
        *,
        limit: int = MAX_EVENTS_PER_READ,
    ) -> HistoryPage:
        """Events after the point ``after`` names visible to ``seat`` (None: public
        only), with their tags, and whether ``after`` is in the game's history (see
        :func:`service.store.events.read_history`).  Raises :class:`GameNotFound`."""
        with translate_errors():
            return read_history(self._fetch, game_id, after, seat, limit)

    def all_events(self, game_id: str, seat: int | None = None) -> list[tuple[int, bytes]]:
        """Every event visible to ``seat`` (None: public only), oldest first, read
        page by page with :meth:`events`.  Raises :class:`GameNotFound`."""
        out: list[tuple[int, bytes]] = []
        after = 0
        while True:
            found, last, _deadline = self.events(game_id, after, seat)
            out += found
            if last <= after:
                return out
            after = last

    def live_streams(self, game_id: str, seat: int) -> int:
        """How many streams (and waiting long polls) hold a live lease on ``seat`` of
        ``game_id`` now (:mod:`service.store.stream_leases`; 0 too when streams are
        not capped per seat, which takes no lease on a seat)."""
        now_ms = int(time.time() * 1000)
        with translate_errors():
            [count] = self._fetch(("ZCOUNT", keys.seat_streams_key(game_id, seat), now_ms, "+inf"))
        return int(count)
