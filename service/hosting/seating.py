"""A new hosted game: the create request's players, seats, ruleset, options and
seed checked and made into a :class:`~service.hosting.record.GameRecord`, with the
tokens of its human seats (a full table is dealt at once)."""

from __future__ import annotations

from typing import Any

from service import bots
from service.engine.errors import InvalidOptionError
from service.engine.records import Event
from service.engine.rules import Game, Options, preset
from service.engine.shuffle import new_seed
from service.hosting.record import GameRecord, Seat
from service.hosting.tokens import hash_token, new_game_id, new_token, seed_from_client


def create_record(
    players: list[dict[str, Any]],
    seats: int | None,
    ruleset: str,
    overrides: dict[str, Any],
    seed: str | int | None,
    allow_seed: bool,
    turn_timeout: int | None = None,
    autopilot_after: int | None = None,
) -> tuple[GameRecord, dict[int, str], list[Event]]:
    """A new game record, the tokens of its human seats, and its first events.

    Raises :class:`InvalidOptionError` (422) for bad options, seat counts or bots.
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
        if player.get("bot") is not None and player["bot"] not in bots.LEVELS:
            raise InvalidOptionError(
                f"unknown bot level {player['bot']!r}; expected one of {', '.join(bots.LEVELS)}",
                field="bot",
            )
    if all(p.get("bot") for p in players) and total == len(players):
        raise InvalidOptionError(
            "a game needs at least one human or open seat; simulate bot-only games "
            "with three-thirteen-sim",
            field="players",
        )
    seeded = seed is not None and allow_seed
    record = GameRecord(
        id=new_game_id(),
        ruleset=ruleset,
        options=options,
        seats=[Seat(i) for i in range(total)],
        seed=seed_from_client(seed) if seeded and seed is not None else new_seed(),
        seeded=seeded,
        turn_timeout=turn_timeout,
        autopilot_after=autopilot_after,
    )
    tokens: dict[int, str] = {}
    events = [Event("game_created", {"seats": total, "ruleset": ruleset})]
    for i, player in enumerate(players):
        seat = record.seats[i]
        seat.name, seat.bot = player["name"], player.get("bot")
        if seat.bot is None:
            tokens[i] = new_token()
            seat.token_hash = hash_token(tokens[i])
        events.append(Event("player_joined", {"seat": i, "name": seat.name, "bot": seat.bot}))
    events += record._start_if_full()
    return record, tokens, events
