"""A new game: its record made from the creator's request, its seats held against
the creator's address's lobby caps (a listed game), and its first write, with
the answer under the request's idempotency key.

A keyed create makes the game whose id the key names
(:func:`~service.hosting.tokens.keyed_game_id`), so its retry finds the game and
the answer saved with it (:class:`~service.store.IdempotentReplay`); a key whose
record expired before its game makes a new game, as a new key would.

Plain Python over a store, like :mod:`service.hosting.write_loop`: the store, the
config, the client's address and how a game's URL is named are parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.config import Config
from service.engine.game_events import Event
from service.hosting import game_webhooks, lobby_listing, seating
from service.hosting.lobby_caps import Hold
from service.hosting.lobby_operations import LobbyTimers
from service.hosting.record import GameRecord
from service.hosting.saved_answers import Idempotency
from service.hosting.tokens import keyed_game_id, new_game_id
from service.hosting.write_loop import create_game
from service.store import GameExists, GameStore
from service.store.history import Position


@dataclass(frozen=True, slots=True)
class Created:
    """The answer to a create: its body (tokens and the webhook's secret, shown
    once) and headers (``Location``), and the game's last event (its ETag's)."""

    body: dict[str, Any]
    headers: dict[str, str]
    last: Position


def earlier_answer(
    store: GameStore, idem: Idempotency, app: str | None = None
) -> tuple[bytes, bytes, bytes] | None:
    """``(fingerprint, answer, id of the game's last event then)`` saved by an
    earlier create with ``idem``'s key (of ``app``'s games), if any."""
    game_id = keyed_game_id(idem.key_hash, app)
    _found, earlier = store.load_with_idempotency(game_id, idem.key_hash)
    return earlier


def create(
    store: GameStore,
    config: Config,
    body: dict[str, Any],
    idem: Idempotency | None,
    *,
    address: str,
    location: Callable[[str], str],
    app: str | None = None,
) -> Created:
    """Make and save the game ``body`` asks for (the fields of ``POST /v1/games``;
    a player's ``holder``, when given, binds its seat: :func:`seating.take`), its
    seats held for ``address``; a game of ``app`` when given (its id says so).
    Raises :class:`IdempotentReplay` when a retry of the same keyed request made
    it meanwhile (nothing held then)."""
    game_id = new_game_id(app) if idem is None else keyed_game_id(idem.key_hash, app)
    turn_timeout = body.get("turn_timeout_seconds")
    autopilot_after = body.get("autopilot_after_missed_turns")
    if body["listed"]:  # strangers sit there: a timer, so that none can stall it
        turn_timeout, autopilot_after = LobbyTimers.configured(config).of_table(
            turn_timeout, autopilot_after
        )
    record, tokens, events = seating.create_record(
        body["players"],
        body.get("seats"),
        body["ruleset"],
        body["options"],
        body.get("seed"),
        config.allow_seeded_games,
        turn_timeout,
        autopilot_after,
        game_id=game_id,
        listed=body["listed"],
    )
    hook_token = None if "webhook" not in body else _add_webhook(config, record, body["webhook"])
    hold = Hold(store, config, address)
    hold.take_new_game(record)  # refused over the address's caps (a listed game)
    player_ids = {
        i: p["player_id"] for i, p in enumerate(body["players"]) if p.get("holder") is not None
    }
    save = _Save(store, config, tokens, events, idem, hook_token, location, player_ids)
    try:
        try:
            created = save(record)
        except GameExists:
            if idem is None:
                raise
            # the key's record expired before the game it made: a new game, as for a new key
            record.id = new_game_id(app)
            hold.take_new_game(record)
            created = save(record)
    except BaseException:  # a replay too: the game its first request made holds the seats
        hold.release()
        raise
    lobby_listing.seats_changed(store, config, record)
    return created


def _add_webhook(config: Config, record: GameRecord, asked: dict[str, Any]) -> str:
    """Give ``record`` the webhook ``asked`` for (refused for a URL it may not call);
    the token that reads its delivery log."""
    game_webhooks.check_url(
        asked["url"],
        allow_http=config.webhook_allow_http,
        allow_loopback=config.webhook_allow_loopback,
    )
    record.webhook, token = game_webhooks.new_webhook(asked["url"], asked.get("events", ()))
    return token


@dataclass(frozen=True, slots=True)
class _Save:
    """The first write of a new game, with the answer to its request."""

    store: GameStore
    config: Config
    tokens: dict[int, str]
    events: list[Event]
    idem: Idempotency | None
    hook_token: str | None
    location: Callable[[str], str]
    player_ids: dict[int, str]

    def __call__(self, record: GameRecord) -> Created:
        """Save ``record`` (with the answer to its request, for a keyed one); that
        answer (with the webhook's secret and token, once)."""
        out = {
            "id": record.id,
            "version": 1,
            "status": record.status,
            "seeded": record.seeded,
            "players": [
                {"seat": s.seat, "name": s.name, "bot": s.bot}
                | ({"token": self.tokens[s.seat]} if s.seat in self.tokens else {})
                | ({"player_id": self.player_ids[s.seat]} if s.seat in self.player_ids else {})
                for s in record.seats
                if not s.is_open
            ],
        }
        if record.webhook is not None and self.hook_token is not None:
            hook = record.webhook
            out["webhook"] = {
                "url": hook.url,
                "events": list(hook.events),
                "secret": hook.secret,
                "token": self.hook_token,
            }
        headers = {"Location": self.location(record.id)}
        saved = None if self.idem is None else self.idem.record(201, out, 1, headers=headers)
        written = create_game(self.store, self.config, record, self.events, saved)
        return Created(out, headers, written.last)
