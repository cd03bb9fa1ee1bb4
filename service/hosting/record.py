"""The game record: what is stored about one hosted game (seats, engine state,
timers, rematch links), its document, and the operations every move goes through.
No Flask and no Redis here: the API loads a record from the store, calls one
operation, and saves the record and the events it returns.

The document is JSON of format :data:`~service.hosting.document.DOC_FORMAT`,
serialized with orjson; the engine state inside it is in its compact form.  The
views of a record are built by :mod:`service.hosting.game_views`; a new game's
record, and joining one, by :mod:`service.hosting.seating`.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from service.engine.codec import (
    chars_of_ids,
    game_for,
    ids_of_chars,
    options_from_dict,
    state_from_compact,
    state_to_compact,
)
from service.engine.errors import GameNotInProgressError, StateFormatError
from service.engine.game_events import Event
from service.engine.moves import Move
from service.engine.options import Options
from service.engine.rules import Game
from service.engine.state import State
from service.engine.view import (
    ArrangementKey,
    arrangement_after_discard,
    arrangement_key,
    hand_arrangement,
)
from service.hosting.bot_turns import History, play_bots
from service.hosting.document import DOC_FORMAT, check_format
from service.hosting.game_webhooks import Webhook
from service.hosting.refusals import GameAbortedError, GameCancelledError, ResignedError
from service.hosting.tokens import hash_token


@dataclass(slots=True)
class Seat:
    """One seat: who sits there.  A human seat on ``autopilot`` is played by the
    bot ``bot`` until its player takes it back; a ``reserved`` seat (rematch) can
    only be claimed by the holder of the earlier game's token.  A rematch seat
    keeps the hash of the token it was claimed with (``claimed_with``): when its
    player leaves, it is reserved for that token again, never opened to anyone."""

    seat: int
    name: str | None = None
    bot: str | None = None
    token_hash: str | None = None
    autopilot: bool = False
    missed_turns: int = 0
    reserved_for: str | None = None
    claimed_with: str | None = None
    resigned: bool = False
    player_id: str | None = None
    """The app's id for the player whose seat it is (apps mode), shown to the app only
    (its view and listing, its webhook: :mod:`service.hosting.app_deliveries`) while
    the seat is taken; kept when the player leaves, so the app is told who left (a
    seat taken again gets its new player's)."""

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
        if self.claimed_with is not None:
            out["claimed_with"] = self.claimed_with
        if self.resigned:
            out["resigned"] = True
        if self.player_id is not None:
            out["player_id"] = self.player_id
        return out


def seat_holders(doc: bytes) -> list[str | None]:
    """The token hash of each seat (None: nobody's) of a game's stored document,
    read without restoring the game.

    >>> seat_holders(b'{"seats": [{"token_hash": "ab"}, {"token_hash": null}]}')
    ['ab', None]
    """
    return [seat.get("token_hash") for seat in orjson.loads(doc)["seats"]]


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
    listed: bool = False
    """Shown in the lobby (``GET /v1/games``) and offered by quick-join."""
    cancelled: bool = False
    """Its last human left before the start: it never will start."""
    aborted: str | None = None
    """Why its app aborted it (``POST /v1/games/{id}/abort``), if it did: it is over."""
    webhook: Webhook | None = None
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
    loaded_status: str | None = field(default=None, repr=False, compare=False)
    """:attr:`status` when the record was read from the store (set by
    :meth:`loaded`), so a write can tell whether it changed it."""

    @property
    def status(self) -> str:
        if self.aborted is not None:
            return "aborted"
        if self.cancelled:
            return "cancelled"
        if self.state is None:
            return "waiting"
        return self.state.status.value

    @property
    def game(self) -> Game:
        return Game(len(self.seats), self.options)

    # -- serialization -------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The document: without the results (:meth:`results_json`, stored apart)."""
        state = None if self.state is None else state_to_compact(self.state)
        doc = {
            "f": DOC_FORMAT,
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
            "lobby": [self.listed, self.cancelled],
            "arr": self._arrangements_to_save(),
        }
        if self.webhook is not None:  # optional: only a game created with one has it
            doc["hook"] = self.webhook.to_dict()
        if self.aborted is not None:  # optional: only an aborted game has it
            doc["aborted"] = self.aborted
        return orjson.dumps(doc)

    def _arrangements_to_save(self) -> list[list[Any]]:
        """``[seat, round index, card ids, arrangement]`` of every human seat's hand
        as it is now: the one known (built for a view, or carried over a
        discard), else solved here.  So each hand is arranged at most once, when
        it is dealt or changed, and not by its views: a waiting player who polls
        its view after every move of the others pays for no solve.  Bots' hands
        are never viewed; hands arranged with the table (``lay_off``, once
        someone went out) have no key and are solved by each view.  The ids are
        one character each, as the state's cards."""
        if self.state is None:
            return []
        rows = []
        for seat in self.seats:
            found = self.arrangement(seat.seat) if seat.token_hash is not None else None
            if found is not None:
                (index, ids), arrangement = found
                rows.append([seat.seat, index, chars_of_ids(ids), arrangement])
        return rows

    def results_json(self) -> bytes:
        """The JSON text of the finished rounds' results."""
        return self.state.results.json() if self.state is not None else b"[]"

    def results_to_save(self) -> bytes | None:
        """:meth:`results_json` when it differs from what is stored apart, else None."""
        text = self.results_json()
        return None if text == self.stored_results else text

    @classmethod
    def from_bytes(cls, raw: bytes, results: bytes | None = None) -> GameRecord:
        """A record from its document and the text of its results (stored apart)."""
        data = orjson.loads(raw)
        check_format(data.get("f"))
        options = options_from_dict(data["options"])
        seats = [Seat(**s) for s in data["seats"]]
        stored = data["state"]
        hook = data.get("hook")
        state = None
        if stored:
            if results is None:
                raise StateFormatError("the state was saved without its results")
            state = state_from_compact(stored, game_for(len(seats), options), data["seed"], results)
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
            listed=data["lobby"][0],
            cancelled=data["lobby"][1],
            aborted=data.get("aborted"),
            webhook=None if hook is None else Webhook.from_dict(hook),
            arrangements={
                seat: ((index, ids_of_chars(ids)), arrangement)
                for seat, index, ids, arrangement in data["arr"]
            },
        )

    @classmethod
    def loaded(cls, raw: bytes, results: bytes | None) -> GameRecord:
        """The record of a game as read from the store (its document and the
        results stored beside it)."""
        record = cls.from_bytes(raw, results)
        record.stored_results = results
        record.loaded_status = record.status
        return record

    # -- access ----------------------------------------------------------------

    def seat_for_token(self, token: str) -> int | None:
        """The seat this bearer token proves, compared in constant time."""
        return self.seat_for_holder(hash_token(token))

    def seat_for_holder(self, digest: str) -> int | None:
        """The seat the token whose hash is ``digest`` proves, compared in constant time."""
        found = None
        for seat in self.seats:
            if seat.token_hash is not None and hmac.compare_digest(seat.token_hash, digest):
                found = seat.seat
        return found

    # -- arrangements ------------------------------------------------------------

    def arrangement(self, seat: int) -> tuple[ArrangementKey, dict[str, Any]] | None:
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

    # -- operations --------------------------------------------------------------

    def play(self, seat: int, move: Move, now: float | None = None) -> list[Event]:
        """Apply a seat's move and start the next turn's clock: a bot's turn that
        follows it is due at once, and played by a bot worker
        (:mod:`service.hosting.due_turns`), never here."""
        if self.aborted is not None:
            raise GameAbortedError(f"this game was aborted by its app: {self.aborted}")
        if self.cancelled:
            raise GameCancelledError("this game was cancelled: its last player left")
        if self.state is None:
            raise GameNotInProgressError("the game has not started: seats are still open")
        if self.seats[seat].resigned:
            raise ResignedError("you resigned: a bot plays this seat to the end of the game")
        events = self.state.apply(seat, move)
        self.seats[seat].missed_turns = 0
        if move.type == "go_out" and any(e.type == "go_out_refused" for e in events):
            events.append(Event("go_out_claim", {"seat": seat, "move": move.to_dict()}, seat))
        self.reset_deadline(now)
        return events

    def after_turn(
        self,
        now: float | None = None,
        history: History | None = None,
    ) -> list[Event]:
        """Play the bots whose turn it is (a bounded stretch), then start the next
        human's clock -- or, with bots left to play, make the game due at once.
        A bot worker's step (:mod:`service.hosting.due_turns`), never a request's."""
        events = play_bots(self.state, self.seed, [s.bot for s in self.seats], history)
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
        turn is played by a bot worker at once), else the turn timer's, if any."""
        state = self.state
        now = time.time() if now is None else now
        if self.aborted is not None:
            self.deadline = None  # over: no turn falls due, no bot plays
        elif self.bot_on_turn:
            self.deadline = now
        elif self.turn_timeout is None or state is None or state.round is None:
            self.deadline = None
        else:
            self.deadline = now + self.turn_timeout

    def start_if_full(self) -> list[Event]:
        """Deal round 1 once every seat is taken (and no round was dealt yet);
        the events of the deal (a bot to play first is due at once)."""
        if any(s.is_open for s in self.seats) or self.state is not None:
            return []
        self.state, deal = State.start(self.game, self.seed)
        self.reset_deadline()
        return [Event("game_started", {"seats": len(self.seats)}), *deal]

    @property
    def all_bots(self) -> bool:
        """True when every seat is played by a bot (bots, autopilot, resigned):
        such a game is played at a bounded pace (``BOT_IDLE_MOVE_SECONDS``)."""
        return all(s.bot is not None for s in self.seats)
