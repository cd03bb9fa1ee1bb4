"""The app and the player a request acts as when it makes a game or takes a seat
(``AUTH_MODE=apps``; in open mode, none: every seat gets a token as before).

A seat taken by a player's credential is bound to that player; an app's backend
binds a seat to one of its players by naming its ``player_id`` (in a create's
``players``, or a join).  A barred player takes no seat (403 ``PLAYER_BARRED``).
Each bound seat is noted in its player's index of games (``GET /v1/me/games``)
once the game's write is made.
"""

from __future__ import annotations

from typing import Any

from service.api.auth import APP, PLAYER, principal, refusal
from service.api.context import call, config, store
from service.hosting import players
from service.hosting.skill_window import SkillWindow, player_skill
from service.hosting.tokens import app_of_game
from service.store.skill_seek import SkillAsk

PLAYER_ID_REFUSED = "`player_id` is for an app's backend (its secret key) in apps mode"
OTHER_PLAYER = "a player's token takes a seat for that player only: leave out `player_id`"


def acting_app() -> str | None:
    """The app whose game the request makes (None in open mode)."""
    if call().services.apps is None:
        return None
    found = principal()
    return None if found is None else found.app


def holder_for(player_id: str | None) -> tuple[str | None, str | None]:
    """``(holder, player id)`` of a seat the request takes, for ``player_id`` (the
    body's): a player's credential takes it as that player; an app's key as the
    player it names, if any.  ``(None, None)``: a seat with a token."""
    found = principal() if call().services.apps is not None else None
    if found is None or found.kind not in (APP, PLAYER):
        if player_id is not None:
            raise refusal("CREDENTIAL_NOT_ALLOWED", PLAYER_ID_REFUSED, counted=False)
        return None, None
    assert found.app is not None
    if found.kind == PLAYER:
        assert found.player is not None
        if player_id is not None and player_id != found.player.id:
            raise refusal("CREDENTIAL_NOT_ALLOWED", OTHER_PLAYER, counted=False)
        return found.holder, found.player.id
    if player_id is None:
        return None, None
    if players.is_barred(store().apps, found.app, player_id):
        raise refusal("PLAYER_BARRED", f"the app bars player {player_id!r}", counted=False)
    return players.player_holder(found.app, player_id), player_id


def skill_ask(player_id: str | None, body: dict[str, Any]) -> tuple[SkillAsk | None, float]:
    """What the quick-join ``body`` of the app's player ``player_id`` asks of a
    table's games: its skill at tables of the body's ruleset and size, in the
    window its app sets (else the configuration's); and after how long a table it
    lists is filled with bots (0: never).  ``(None, 0)`` for an anonymous one (no
    player)."""
    directory = call().services.apps
    app = acting_app()
    if player_id is None or directory is None or app is None:
        return None, 0.0
    skill = player_skill(store(), app, body["ruleset"], body["seats"], player_id)
    window = SkillWindow.of(config(), directory.get(app))
    return window.ask(player_id, skill), window.bot_fill


def with_holders(asked: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """A create's ``players``, each with the ``holder`` of its seat (see
    :func:`holder_for`: the seats naming a ``player_id`` only; the others get
    tokens), and the ids of the players bound."""
    out, bound = [], []
    for player in asked:
        holder, player_id = (None, None)
        if player.get("bot") is None and player.get("player_id") is not None:
            holder, player_id = holder_for(player["player_id"])
        elif player.get("player_id") is not None:
            raise refusal("CREDENTIAL_NOT_ALLOWED", "a bot's seat has no player", counted=False)
        if player_id is not None:
            bound.append(player_id)
        out.append({**player, "holder": holder})
    return out, bound


def note_seated(game_id: str, player_ids: list[str]) -> None:
    """Note ``game_id`` in the index of each of ``player_ids`` (players of its app)."""
    app = app_of_game(game_id)
    if app is None:
        return
    for player_id in player_ids:
        store().apps.note_game(
            players.player_tag(app, player_id), game_id, config().game_ttl_seconds
        )
