"""Who is asking: the bearer token of a request, the seat it proves, and the 401
answered when it proves none."""

from __future__ import annotations

from service.api.context import Call, call
from service.api.problems import ApiError
from service.hosting.record import GameRecord

NO_TOKEN = "send Authorization: Bearer <token> for your seat"
NOT_SEATED = "this token does not hold a seat in this game"


def bearer_token(current: Call | None = None) -> str | None:
    """The bearer token of ``current`` (default: the request being answered), if any."""
    header = (current or call()).header("Authorization") or ""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def unauthorized(detail: str) -> ApiError:
    """The 401 to raise; counted against the client's address first, so that an
    address sending bogus tokens is answered 429 once over its limit."""
    current = call()
    if current.services.limits is not None:
        current.services.limits.count_auth_failure(current.environ)  # 429 over the limit
    return ApiError("UNAUTHORIZED", detail, headers={"WWW-Authenticate": 'Bearer realm="games"'})


def require_token() -> str:
    """The request's bearer token, or 401 (before any game is read)."""
    token = bearer_token()
    if token is None:
        raise unauthorized(NO_TOKEN)
    return token


def require_seat(record: GameRecord) -> int:
    """The seat proven by the request's bearer token, or 401."""
    seat = record.seat_for_token(require_token())
    if seat is None:
        raise unauthorized(NOT_SEATED)
    return seat
