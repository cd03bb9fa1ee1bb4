"""The requests the hosting layer refuses: the API answers them as it answers the
engine's errors (409 unless :mod:`service.api.problems` lists another status)."""

from __future__ import annotations

from service.engine.errors import EngineError


class HostingError(EngineError):
    """A request the lobby cannot satisfy."""


class GameFullError(HostingError):
    code = "GAME_FULL"


class NotSeatedError(HostingError):
    code = "SEAT_NOT_RESERVED"


class SeatClaimedError(HostingError):
    code = "SEAT_ALREADY_CLAIMED"


class GameNotFinishedError(HostingError):
    code = "GAME_NOT_FINISHED"


class SeatTakenError(HostingError):
    code = "SEAT_TAKEN"


class NoSuchSeatError(HostingError):
    code = "NO_SUCH_SEAT"


class GameStartedError(HostingError):
    code = "GAME_STARTED"


class GameCancelledError(HostingError):
    code = "GAME_CANCELLED"


class ResignedError(HostingError):
    code = "RESIGNED"
