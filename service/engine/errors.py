"""The engine's exceptions.

Two families, as in python-chess: :class:`MalformedError` for input that is
not well formed (an unknown card code, option or move type), and
:class:`IllegalMoveError` for well-formed moves that the state forbids.  Every
error carries a stable machine-readable ``code``; the HTTP layer maps the
classes to status codes in one place.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""

    code = "ENGINE_ERROR"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code


class MalformedError(EngineError, ValueError):
    """Input that does not parse: bad card code, unknown option, bad value."""

    code = "MALFORMED"


class InvalidOptionError(MalformedError):
    """An unknown option, a value outside the allowed ones, or an unknown preset."""

    code = "INVALID_OPTION"


class IllegalMoveError(EngineError):
    """A well-formed move that is not legal now; the state is left untouched."""

    code = "ILLEGAL_MOVE"


class StateConflictError(IllegalMoveError):
    """The move cannot be made in this state at all (turn, phase, game over)."""

    code = "STATE_CONFLICT"


class NotYourTurnError(StateConflictError):
    code = "NOT_YOUR_TURN"


class WrongPhaseError(StateConflictError):
    code = "WRONG_PHASE"


class GameNotInProgressError(StateConflictError):
    code = "GAME_NOT_IN_PROGRESS"


class CardNotInHandError(IllegalMoveError):
    code = "CARD_NOT_IN_HAND"


class InvalidMeldsError(IllegalMoveError):
    code = "INVALID_MELDS"


class DiscardForbiddenError(IllegalMoveError):
    """Discarding a card of the code just taken from the discard pile."""

    code = "DISCARD_FORBIDDEN"


class StockUnavailableError(IllegalMoveError):
    """The stock is empty and there is nothing to reshuffle into it."""

    code = "STOCK_UNAVAILABLE"


class GoOutForbiddenError(IllegalMoveError):
    """Going out after a refused claim in the same turn (false_go_out_penalty)."""

    code = "GO_OUT_FORBIDDEN"


class StateFormatError(EngineError):
    """A serialized state that this version cannot read."""

    code = "STATE_FORMAT"


class SearchTooLargeError(MalformedError):
    """A hand and table whose arrangement would take more work than a search may
    spend (a backstop against crafted input; no game reaches it)."""

    code = "SEARCH_TOO_LARGE"
