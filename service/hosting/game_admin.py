"""What a game's app may do to it beyond its players (``AUTH_MODE=apps``): abort
it, and remove a player from it before it starts.  Operations on a game record,
as the lobby's are (:mod:`service.hosting.lobby_operations`): no Flask, no Redis.
"""

from __future__ import annotations

from service.engine.errors import GameNotInProgressError
from service.engine.game_events import Event
from service.hosting.lobby_operations import leave
from service.hosting.players import player_holder
from service.hosting.record import GameRecord
from service.hosting.refusals import GameAbortedError, GameCancelledError, PlayerNotSeatedError

REMOVED = "removed"
"""The ``reason`` of the ``player_left`` of a player its app removed."""


def abort(record: GameRecord, reason: str) -> list[Event]:
    """End a game that is waiting or in play, for ``reason`` (the app's text): its
    status is ``aborted`` for good, no turn falls due any more (no bot, no timer
    plays), every move and seat is refused; its event ``game_aborted`` tells
    every follower.  A finished, cancelled or aborted game is refused (409)."""
    if record.aborted is not None:
        raise GameAbortedError(f"this game was aborted already: {record.aborted}")
    if record.cancelled:
        raise GameCancelledError("this game was cancelled: its last player left")
    if record.status == "finished":
        raise GameNotInProgressError("the game is over: it finished")
    record.aborted = reason
    record.reset_deadline()
    return [Event("game_aborted", {"reason": reason})]


def remove_player(record: GameRecord, app: str, player_id: str) -> tuple[int, list[Event]]:
    """Free the seat the app's player ``player_id`` holds in a game that has not
    started, as if the player left (``player_left``, ``reason`` ``removed``; the
    last human out cancels the game): ``(seat, events)``.  404 when the player
    holds no seat of it, 409 once it started."""
    seat = record.seat_for_holder(player_holder(app, player_id))
    if seat is None:
        raise PlayerNotSeatedError(f"player {player_id!r} holds no seat of this game")
    return seat, leave(record, seat, REMOVED)
