"""Hosted games: the stored record of one game (lobby, seats, engine state) and
the operations on it.  No Flask and no Redis here: the API loads a record from
the store, calls one operation, and saves the record and the events it returns.

A record is versioned JSON (``DOC_FORMAT``, see :mod:`service.hosting.document`),
serialized with orjson; the engine state inside it has its own format version.
A new game's record is made by :func:`service.hosting.seating.create_record`.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from mypy_extensions import mypyc_attr

from service.engine.codec import (
    chars_of_ids,
    game_for,
    ids_of_chars,
    options_from_dict,
    state_from_compact,
    state_from_dict,
    state_to_compact,
    state_to_dict,
)
from service.engine.errors import EngineError, GameNotInProgressError, StateFormatError
from service.engine.moves import Move
from service.engine.records import Event
from service.engine.rules import Game, Options
from service.engine.shuffle import commitment
from service.engine.state import State
from service.engine.view import (
    ArrangementKey,
    arrangement_after_discard,
    arrangement_key,
    empty_seat_part,
    hand_arrangement,
    observe,
    seat_part,
)
from service.hosting.bot_turns import History, play_bots
from service.hosting.document import (
    DROP_RESULTS,
    READABLE_FORMATS,
    seat_parts_text,
    with_results,
    with_seat_part,
    write_format,
)
from service.hosting.tokens import hash_token, new_token


# Exceptions stay plain Python classes when this module is compiled: their
# class-level ``code`` is the default that instances read.
@mypyc_attr(native_class=False)
class HostingError(EngineError):
    """A request the lobby cannot satisfy (the API maps it like engine errors)."""


@mypyc_attr(native_class=False)
class GameFullError(HostingError):
    code = "GAME_FULL"


@dataclass(slots=True)
class Seat:
    """One seat: who sits there.  A human seat on ``autopilot`` is played by the
    bot ``bot`` until its player takes it back; a ``reserved`` seat (rematch) can
    only be claimed by the holder of the earlier game's token."""

    seat: int
    name: str | None = None
    bot: str | None = None
    token_hash: str | None = None
    autopilot: bool = False
    missed_turns: int = 0
    reserved_for: str | None = None

    @property
    def is_open(self) -> bool:
        return self.name is None or self.reserved_for is not None

    @property
    def is_joinable(self) -> bool:
        return self.name is None and self.reserved_for is None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seat": self.seat,
            "name": self.name,
            "bot": self.bot,
            "token_hash": self.token_hash,
        }
        if self.autopilot:
            out["autopilot"] = True
        if self.missed_turns:
            out["missed_turns"] = self.missed_turns
        if self.reserved_for is not None:
            out["reserved_for"] = self.reserved_for
        return out


@dataclass(slots=True)
class GameRecord:
    """Everything stored about one game."""

    id: str
    ruleset: str
    options: Options
    seats: list[Seat]
    seed: str
    seeded: bool = False
    created_at: float = field(default_factory=time.time)
    state: State | None = None
    turn_timeout: int | None = None
    autopilot_after: int | None = None
    deadline: float | None = None
    rematch_id: str | None = None
    rematch_of: str | None = None
    arrangements: dict[int, tuple[ArrangementKey, dict[str, Any]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    """Seat -> (:func:`arrangement_key`, the arrangement's JSON form) of the seats'
    hands as last built or solved; saved with the document for every human seat
    (see :meth:`_arrangements_to_save`), so that a view does not solve the hand
    (its legal moves still check the going-out discards), and neither does the
    hand left by discarding a deadwood card of one (:func:`arrangement_after_discard`)."""
    stored_results: bytes | None = field(default=None, repr=False, compare=False)
    """The results' text as stored apart in this game's store entry (set by
    :meth:`loaded`; None: not stored yet), so a save rewrites them only when
    they changed."""

    @property
    def status(self) -> str:
        if self.state is None:
            return "waiting"
        return self.state.status.value

    @property
    def game(self) -> Game:
        return Game(len(self.seats), self.options)

    # -- serialization -------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The document: without the results (:meth:`results_json`, stored apart),
        or with them when format 1 is written (:func:`set_write_format`)."""
        doc_format = write_format()
        compact = doc_format == 3
        state: dict[str, Any] | None = None
        if self.state is not None:
            state = (
                state_to_compact(self.state)
                if compact
                else state_to_dict(self.state, results=doc_format == 1)
            )
        return orjson.dumps(
            {
                "f": doc_format,
                "id": self.id,
                "ruleset": self.ruleset,
                "options": self.options.to_dict(),
                "seats": [s.to_dict() for s in self.seats],
                "seed": self.seed,
                "seeded": self.seeded,
                "created_at": self.created_at,
                "state": state,
                "timing": [self.turn_timeout, self.autopilot_after, self.deadline],
                "rematch": [self.rematch_of, self.rematch_id],
                "arr": self._arrangements_to_save(compact),
            }
        )

    def _arrangements_to_save(self, compact: bool) -> list[list[Any]]:
        """``[seat, round index, card ids, arrangement]`` of every human seat's hand
        as it is now: the one known (built for a view, or carried over a
        discard), else solved here.  So each hand is arranged at most once, when
        it is dealt or changed, and not by its views: a waiting player who polls
        its view after every move of the others pays for no solve.  Bots' hands
        are never viewed; hands arranged with the table (``lay_off``, once
        someone went out) have no key and are solved by each view.  With
        ``compact`` (format 3) the ids are one character each, as the state's cards."""
        if self.state is None:
            return []
        rows = []
        for seat in self.seats:
            found = self._arrangement(seat.seat) if seat.token_hash is not None else None
            if found is not None:
                (index, ids), arrangement = found
                rows.append([seat.seat, index, chars_of_ids(ids) if compact else ids, arrangement])
        return rows

    def results_json(self) -> bytes:
        """The JSON text of the finished rounds' results."""
        return self.state.results.json() if self.state is not None else b"[]"

    def results_to_save(self) -> bytes | None:
        """:meth:`results_json` when it differs from what is stored apart, else None
        (:data:`DROP_RESULTS` when format 1 is written and some are stored apart)."""
        if write_format() == 1:
            return None if self.stored_results is None else DROP_RESULTS
        text = self.results_json()
        return None if text == self.stored_results else text

    @classmethod
    def from_bytes(cls, raw: bytes, results: bytes | None = None) -> GameRecord:
        """A record from its document and the text of its results (stored apart
        since format 2; a format 1 document holds them)."""
        data = orjson.loads(raw)
        doc_format = data.get("f")
        if doc_format not in READABLE_FORMATS:
            raise ValueError(f"unknown game record format {doc_format!r}")
        options = options_from_dict(data["options"])
        seats = [Seat(**s) for s in data["seats"]]
        stored = data["state"]
        state = None
        if stored and doc_format == 3:
            game = game_for(len(seats), options)
            if results is None:
                raise StateFormatError("the state was saved without its results")
            state = state_from_compact(stored, game, data["seed"], results)
        elif stored:
            state = state_from_dict(stored, results)
        ids_of = ids_of_chars if doc_format == 3 else tuple
        return cls(
            id=data["id"],
            ruleset=data["ruleset"],
            options=options,
            seats=seats,
            seed=data["seed"],
            seeded=data["seeded"],
            created_at=data["created_at"],
            state=state,
            turn_timeout=data["timing"][0],
            autopilot_after=data["timing"][1],
            deadline=data["timing"][2],
            rematch_of=data["rematch"][0],
            rematch_id=data["rematch"][1],
            arrangements={
                seat: ((index, ids_of(ids)), arrangement)
                for seat, index, ids, arrangement in data.get("arr", ())
            },
        )

    @classmethod
    def loaded(cls, raw: bytes, results: bytes | None) -> GameRecord:
        """The record of a game as read from the store (its document and the
        results stored beside it, if any)."""
        record = cls.from_bytes(raw, results)
        record.stored_results = results
        return record

    # -- access ----------------------------------------------------------------

    def seat_for_token(self, token: str) -> int | None:
        """The seat this bearer token proves, compared in constant time."""
        digest = hash_token(token)
        found = None
        for seat in self.seats:
            if seat.token_hash is not None and hmac.compare_digest(seat.token_hash, digest):
                found = seat.seat
        return found

    # -- views -----------------------------------------------------------------

    def view(self, version: int, seat: int | None = None) -> dict[str, Any]:
        """The public view (``seat`` None) or a seat's view, with lobby details, ready
        for orjson (``results`` is pre-serialized JSON, see :func:`observe`).

        In that order: the public view but its results (:meth:`public_json`),
        ``results``, then the seat's part (:func:`seat_part`); the texts of
        :meth:`move_texts` and :func:`with_results` rely on it."""
        out = self._public_view(version)
        out["results"] = orjson.Fragment(self.results_json())
        if seat is not None:
            out.update(self._seat_part(seat))
        return out

    def public_json(self, version: int) -> bytes:
        """The public view as saved beside the document: without its results,
        which :func:`with_results` adds when it is read (with them in format 1)."""
        return self._saved_public(orjson.dumps(self._public_view(version)))

    def move_texts(self, version: int, seat: int) -> tuple[bytes, bytes, bytes]:
        """The texts a move saves and answers, built in one pass: the public view
        as saved (:meth:`public_json`), ``seat``'s view -- the public one with the
        results and the seat's part appended -- and every seat's part as saved
        (:meth:`seat_parts_json`), ``seat``'s built once for both."""
        bare = orjson.dumps(self._public_view(version))
        part = orjson.dumps(self._seat_part(seat))
        return (
            self._saved_public(bare),
            with_results(bare, self.results_json(), part),
            self.seat_parts_json(version, (seat, part)),
        )

    def seat_parts_json(self, version: int, ready: tuple[int, bytes] | None = None) -> bytes:
        """Every seat's part of its view at ``version``, keyed by its token's hash
        (:func:`~service.hosting.document.seat_parts_text`), as saved beside the public
        view: a seat's view then needs neither the document nor the engine
        (``ready``: a seat's part built already).  Seats without a token (bots) have
        no view."""
        parts = []
        for seat in self.seats:
            if seat.token_hash is None:
                continue
            if ready is not None and ready[0] == seat.seat:
                part = ready[1]
            else:
                part = orjson.dumps(self._seat_part(seat.seat))
            parts.append((seat.token_hash, part))
        return seat_parts_text(version, parts)

    def seat_view_json(self, public: bytes, seat: int) -> bytes:
        """``seat``'s view as JSON text, from the text of the public view of this
        very version (results included, as the store saved it): the seat's part
        is appended to it, so only that part is built."""
        return with_seat_part(public, orjson.dumps(self._seat_part(seat)))

    def _saved_public(self, bare: bytes) -> bytes:
        return bare if write_format() >= 2 else with_results(bare, self.results_json())

    def _seat_part(self, seat: int) -> dict[str, Any]:
        if self.state is None:
            return empty_seat_part(seat)
        found = self._arrangement(seat)
        return seat_part(self.state, seat, known=found[1] if found is not None else None)

    def _arrangement(self, seat: int) -> tuple[ArrangementKey, dict[str, Any]] | None:
        """(:func:`arrangement_key`, best arrangement) of ``seat``'s hand now, from
        :attr:`arrangements` when known (the hand as last arranged, or that hand
        less a discarded deadwood card), else solved and remembered there; None
        while the hand is arranged with the table (or no round is in play)."""
        assert self.state is not None
        key = arrangement_key(self.state, seat)
        if key is None:
            return None
        stored = self.arrangements.get(seat)
        known = None
        if stored is not None:
            known = (
                stored[1]
                if stored[0] == key
                else arrangement_after_discard(self.state, key, stored)
            )
        if known is None:
            known = hand_arrangement(self.state, seat)
        self.arrangements[seat] = (key, known)
        return key, known

    def _public_view(self, version: int) -> dict[str, Any]:
        if self.state is not None:
            out = observe(self.state, raw_results=True)
            del out["results"]  # stored apart, appended by view() and with_results()
        else:
            out = {
                "status": "waiting",
                "options": self.options.to_dict(),
                "decks": self.game.decks,
                "rounds_total": len(self.game.rounds),
                "players": [{"seat": s.seat, "hand_size": 0, "total": 0} for s in self.seats],
                "round": None,
                "winners": None,
            }
        for player, seat_info in zip(out["players"], self.seats, strict=True):
            player["name"] = seat_info.name
            player["bot"] = seat_info.bot
            player["autopilot"] = seat_info.autopilot
        finished = self.status == "finished"
        out = {"id": self.id, "version": version, **out}
        out["status"] = self.status
        out["ruleset"] = self.ruleset
        out["open_seats"] = [s.seat for s in self.seats if s.is_joinable]
        out["timer"] = {
            "turn_timeout_seconds": self.turn_timeout,
            "autopilot_after_missed_turns": self.autopilot_after,
            "deadline": self.deadline,
        }
        out["rematch"] = {"of": self.rematch_of, "game": self.rematch_id}
        out["fairness"] = {
            "commitment": commitment(self.seed),
            "seed": self.seed if finished else None,
            "seeded": self.seeded,
        }
        return out

    # -- operations --------------------------------------------------------------

    def join(self, name: str) -> tuple[int, str, list[Event]]:
        """Take the lowest open seat; deal round 1 when it was the last one."""
        open_seats = [s for s in self.seats if s.is_joinable]
        if not open_seats:
            raise GameFullError("every seat is taken")
        seat = open_seats[0]
        token = new_token()
        seat.name, seat.token_hash = name, hash_token(token)
        events = [Event("player_joined", {"seat": seat.seat, "name": name, "bot": None})]
        return seat.seat, token, events + self._start_if_full()

    def play(
        self,
        seat: int,
        move: Move,
        now: float | None = None,
        history: History | None = None,
    ) -> list[Event]:
        """Apply a seat's move, then every bot turn that follows it.

        ``history`` loads the game's stored public events (as the events
        endpoint shows them) for bots that track the cards (``strong``)."""
        if self.state is None:
            raise GameNotInProgressError("the game has not started: seats are still open")
        events = self.state.apply(seat, move)
        self.seats[seat].missed_turns = 0
        if move.type == "go_out" and any(e.type == "go_out_refused" for e in events):
            events.append(Event("go_out_claim", {"seat": seat, "move": move.to_dict()}, seat))
        return events + self.after_turn(now, history, events)

    def after_turn(
        self,
        now: float | None = None,
        history: History | None = None,
        recent: Sequence[Event] = (),
    ) -> list[Event]:
        """Play the bots whose turn it is (a bounded stretch), then start the next
        human's clock -- or, with bots left to play, make the game due at once."""
        events = play_bots(self, history, recent)
        self.reset_deadline(now)
        return events

    @property
    def bot_on_turn(self) -> bool:
        """True when a bot (or a seat on autopilot) is to play, in a game in play."""
        state = self.state
        return (
            state is not None
            and state.round is not None
            and self.seats[state.round.turn].bot is not None
        )

    def reset_deadline(self, now: float | None = None) -> None:
        """The deadline of the player whose turn it is: now when it is a bot's (its
        turn is played by the next request), else the turn timer's, if any."""
        state = self.state
        now = time.time() if now is None else now
        if self.bot_on_turn:
            self.deadline = now
        elif self.turn_timeout is None or state is None or state.round is None:
            self.deadline = None
        else:
            self.deadline = now + self.turn_timeout

    def _start_if_full(self) -> list[Event]:
        if any(s.is_open for s in self.seats) or self.state is not None:
            return []
        self.state, deal = State.start(self.game, self.seed)
        return [Event("game_started", {"seats": len(self.seats)}), *deal, *self.after_turn()]
