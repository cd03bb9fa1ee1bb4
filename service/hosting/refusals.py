"""The requests the hosting layer refuses: the API answers them as it answers the
engine's errors (409 unless :mod:`service.api.problems` lists another status),
with ``Retry-After`` when :attr:`HostingError.retry_after` is set."""

from __future__ import annotations

from typing import Any

from service.engine.errors import EngineError
from service.store.history import Position


class HostingError(EngineError):
    """A request the lobby cannot satisfy."""

    retry_after: int | None = None
    """Seconds after which the same request may succeed (None: not by waiting)."""

    def extra(self) -> dict[str, Any]:
        """Members the answer carries beside the code and the detail."""
        return {}


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


class GameAbortedError(HostingError):
    code = "GAME_ABORTED"


class PlayerNotSeatedError(HostingError):
    code = "PLAYER_NOT_SEATED"


class AlreadySeatedError(HostingError):
    code = "ALREADY_SEATED"


class ResignedError(HostingError):
    code = "RESIGNED"


class VersionMismatchError(HostingError):
    """A conditional write found the game at another version than the one named."""

    code = "PRECONDITION_FAILED"

    def __init__(self, message: str, *, current_version: int | None = None):
        super().__init__(message)
        self.current_version = current_version

    def extra(self) -> dict[str, Any]:
        return {} if self.current_version is None else {"current_version": self.current_version}


class HistoryDivergedError(HostingError):
    """A conditional write named an event the game's history no longer holds (its
    store lost changes the client saw): ``shared`` is the last point both share."""

    code = "HISTORY_DIVERGED"

    def __init__(
        self, message: str, *, current_version: int | None = None, shared: Position | None = None
    ):
        super().__init__(message)
        self.current_version = current_version
        self.shared = shared

    def extra(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.current_version is not None:
            found["current_version"] = self.current_version
        if self.shared is not None:
            found.update(self.shared.as_shared())
        return found


class ChangingTooFastError(HostingError):
    """A write lost every race it ran for a game changing under it."""

    code = "CONFLICT"


class LobbyBusyError(HostingError):
    """Quick-join found no seat it could take in its tries."""

    code = "LOBBY_BUSY"
    retry_after = 1


class LobbyCapError(HostingError):
    """A client address at its lobby cap (:mod:`service.hosting.lobby_caps`)."""

    code = "RATE_LIMITED"
    retry_after = 60
    """A seat or a listed game frees when a game ends, fills, or is left, not at a
    time the service knows."""


class IdempotencyKeyReusedError(HostingError):
    """An ``Idempotency-Key`` used before with another request."""

    code = "IDEMPOTENCY_KEY_REUSED"


class AppLimitError(HostingError):
    """An app, or one of its players, over one of the limits its operator set
    (:data:`~service.hosting.apps.LIMITS`): ``limit`` names it, ``scope`` says
    whose (``app``: the app's backend and players together; ``player``)."""

    code = "APP_LIMIT_EXCEEDED"

    def __init__(
        self,
        message: str,
        *,
        limit: str = "concurrent_games",
        scope: str = "app",
        retry_after: int = 60,
    ):
        super().__init__(message)
        self.limit = limit
        self.scope = scope
        self.retry_after = retry_after

    def extra(self) -> dict[str, Any]:
        return {"limit": self.limit, "scope": self.scope}
