"""Seats: a new hosted game (the create request's players, seats, ruleset, options
and seed checked and made into a :class:`~service.hosting.record.GameRecord`),
joining an open seat, and claiming the seat a rematch reserved.  Each human who
takes a seat is issued its bearer token here (:func:`issue_token`); the table is
dealt as soon as every seat is taken."""

from __future__ import annotations

from typing import Any

from service.engine.errors import InvalidOptionError
from service.engine.game_events import Event
from service.engine.options import Options, preset
from service.engine.rules import Game
from service.engine.shuffle import new_seed, seed_from_client
from service.hosting.bot_turns import check_bot_level
from service.hosting.record import GameRecord, Seat
from service.hosting.refusals import (
    AlreadySeatedError,
    GameAbortedError,
    GameCancelledError,
    GameFullError,
    NoSuchSeatError,
    NotSeatedError,
    SeatClaimedError,
    SeatTakenError,
)
from service.hosting.tokens import PLAYER_HOLDER_PREFIX, hash_token, new_game_id, new_token


def issue_token(seat: Seat) -> str:
    """A new bearer token for ``seat``, whose hash the seat keeps (the token is
    shown once, to the player taking the seat)."""
    token = new_token()
    seat.token_hash = hash_token(token)
    return token


def refuse_ended(record: GameRecord) -> None:
    """Refuse a seat of a game that will never start: cancelled, or aborted by its app."""
    if record.aborted is not None:
        raise GameAbortedError(f"this game was aborted by its app: {record.aborted}")
    if record.cancelled:
        raise GameCancelledError("this game was cancelled: its last player left")


def take(
    record: GameRecord, seat: Seat, holder: str | None, player_id: str | None = None
) -> str | None:
    """Give ``seat`` its holder: a new bearer token (returned, shown once), or the
    player ``holder`` (:func:`service.hosting.players.player_holder`) of the app's
    ``player_id``, who may hold one seat of a game only (:class:`AlreadySeatedError`);
    no token then."""
    seat.player_id = None if holder is None else player_id
    if holder is None:
        return issue_token(seat)
    if record.seat_for_holder(holder) is not None:
        raise AlreadySeatedError("this player holds a seat of this game already")
    seat.token_hash, seat.player_id = holder, player_id
    return None


def create_record(
    players: list[dict[str, Any]],
    seats: int | None,
    ruleset: str,
    overrides: dict[str, Any],
    seed: str | int | None,
    allow_seed: bool,
    turn_timeout: int | None = None,
    autopilot_after: int | None = None,
    game_id: str | None = None,
    listed: bool = False,
) -> tuple[GameRecord, dict[int, str], list[Event]]:
    """A new game record (of id ``game_id``, default a new one), the tokens of its
    human seats, and its first events.  A player given a ``holder`` (apps mode: the
    player of an app) takes its seat as that player, with no token.

    Raises :class:`InvalidOptionError` (422) for bad options, seat counts or bots,
    and for a seeded game asked to be ``listed``.
    """
    options = Options.from_dict(overrides, base=preset(ruleset))
    total = len(players) if seats is None else seats
    if total < len(players):
        raise InvalidOptionError(
            f"seats ({total}) is less than the number of players given ({len(players)})",
            field="seats",
        )
    Game(total, options)  # validates the seat count and decks
    for player in players:
        if player.get("bot") is not None:
            check_bot_level(player["bot"], "bot")
    if all(p.get("bot") for p in players) and total == len(players):
        raise InvalidOptionError(
            "a game needs at least one human or open seat; simulate bot-only games "
            "with three-thirteen-sim",
            field="players",
        )
    seeded = seed is not None and allow_seed
    if seeded and listed:  # its creator can compute every hand: not for strangers
        raise InvalidOptionError(
            "a seeded game cannot be listed: its creator knows every deal; "
            "leave out `seed` or `listed`",
            field="listed",
        )
    record = GameRecord(
        id=new_game_id() if game_id is None else game_id,
        ruleset=ruleset,
        options=options,
        seats=[Seat(i) for i in range(total)],
        seed=seed_from_client(seed) if seeded and seed is not None else new_seed(),
        seeded=seeded,
        turn_timeout=turn_timeout,
        autopilot_after=autopilot_after,
        listed=listed,
    )
    tokens: dict[int, str] = {}
    events = [Event("game_created", {"seats": total, "ruleset": ruleset})]
    for i, player in enumerate(players):
        seat = record.seats[i]
        seat.name, seat.bot = player["name"], player.get("bot")
        if seat.bot is None:
            token = take(record, seat, player.get("holder"), player.get("player_id"))
            if token is not None:
                tokens[i] = token
        events.append(Event("player_joined", {"seat": i, "name": seat.name, "bot": seat.bot}))
    events += record.start_if_full()
    return record, tokens, events


def join(
    record: GameRecord,
    name: str,
    seat: int | None = None,
    holder: str | None = None,
    player_id: str | None = None,
) -> tuple[int, str | None, list[Event]]:
    """Take ``seat`` of ``record``, or its lowest open seat: ``(seat, token,
    events)``; deals round 1 when it was the last one.  A player's ``holder`` takes
    it as that player (no token: see :func:`take`), the app's ``player_id``."""
    refuse_ended(record)
    if seat is not None:
        if seat >= len(record.seats):
            raise NoSuchSeatError(f"this game has seats 0 to {len(record.seats) - 1}")
        if not record.seats[seat].is_joinable:
            raise SeatTakenError(f"seat {seat} is taken")
        chosen = record.seats[seat]
    else:
        open_seats = [s for s in record.seats if s.is_joinable]
        if not open_seats:
            raise GameFullError("every seat is taken")
        chosen = open_seats[0]
    token = take(record, chosen, holder, player_id)
    chosen.name = name
    events = [Event("player_joined", {"seat": chosen.seat, "name": name, "bot": None})]
    return chosen.seat, token, events + record.start_if_full()


def claim_reserved(record: GameRecord, holder: str) -> tuple[int, str | None, list[Event]]:
    """Claim the rematch seat reserved for ``holder`` (the hash of its token in the
    finished game, or its player's holder): ``(seat, new token, events)``; a
    player's seat gets no token (its player's credentials act for it)."""
    refuse_ended(record)
    for seat in record.seats:
        if seat.reserved_for == holder:
            seat.reserved_for, seat.claimed_with = None, holder
            token = None
            if holder.startswith(PLAYER_HOLDER_PREFIX):
                seat.token_hash = holder
            else:
                token = issue_token(seat)
            events = [Event("player_joined", {"seat": seat.seat, "name": seat.name, "bot": None})]
            return seat.seat, token, events + record.start_if_full()
    if any(s.token_hash is not None for s in record.seats):
        raise SeatClaimedError("your seat in the rematch was claimed already")
    raise NotSeatedError("no seat in this rematch is reserved for you")
