"""Who is asking: the bearer token of a request, whom it stands for (a seat, and in
``AUTH_MODE=apps`` an app's backend or one of its players: :class:`Principal`), the
seat it proves, and the 401 or 403 answered when it proves nothing.

Every refusal of a credential is counted against the client's address
(``RATE_LIMIT_AUTH_FAILURES``) before it is answered.  No credential is ever put in
a problem's detail or a log line.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.api.context import Call, call
from service.api.problems import ApiError
from service.hosting import apps, player_jwts, players
from service.hosting.apps import AppDirectory
from service.hosting.players import Player
from service.hosting.record import GameRecord
from service.hosting.tokens import hash_token

NO_TOKEN = "send Authorization: Bearer <token> for your seat"
NOT_SEATED = "this token does not hold a seat in this game"
BAD_CREDENTIAL = "this key or token is unknown, revoked or of a revoked app"
EXPIRED = "this player token has expired: ask the app for a new one"
BAD_JWT = (
    "this JWT is refused: its signature, alg, kid, aud, iat or sub is not one the app "
    "registered, or the player's tokens were revoked since it was issued"
)

APP = "app"
PLAYER = "player"
SEAT = "seat"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request's credential stands for: an app's backend (``app``), one of its
    players (``player``) or a seat's token (``seat``: its game's holder, the token's
    hash)."""

    kind: str
    app: str | None
    holder: str
    player: Player | None = None


def bearer_token(current: Call | None = None) -> str | None:
    """The bearer token of ``current`` (default: the request being answered), if any."""
    header = (current or call()).header("Authorization") or ""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def refusal(code: str, detail: str, *, counted: bool = True) -> ApiError:
    """The error to raise for a refused credential; counted against the client's
    address first, so that an address sending bogus credentials is answered 429
    once over its limit."""
    current = call()
    if counted and current.services.limits is not None:
        current.services.limits.count_auth_failure(current.environ)  # 429 over the limit
    headers = {"WWW-Authenticate": 'Bearer realm="games"'} if code != "GAME_NOT_FOUND" else {}
    return ApiError(code, detail, headers=headers)


def unauthorized(detail: str) -> ApiError:
    """The 401 to raise (see :func:`refusal`)."""
    return refusal("UNAUTHORIZED", detail)


def principal(current: Call | None = None) -> Principal | None:
    """Whom the request's bearer token stands for (None: no token); found once per
    request.  In open mode every token is a seat's.  In apps mode an app's secret
    key, a player token or a player JWT signed by the app is checked (401
    ``INVALID_CREDENTIAL`` or ``CREDENTIAL_EXPIRED`` when refused); any other token is
    a seat's, which the game's seats decide.  A player token is read with the
    request's first read of its game, when its route names one (one round trip)."""
    current = current or call()
    if current.identity is not None:
        return current.identity  # type: ignore[no-any-return]
    token = bearer_token(current)
    if token is None:
        return None
    directory = current.services.apps
    found: Principal
    if directory is not None and token.startswith(apps.KEY_PREFIX):
        app = directory.by_key(token)
        if app is None:
            raise refusal("INVALID_CREDENTIAL", BAD_CREDENTIAL)
        found = Principal(APP, app.id, "app:" + app.id)
    elif directory is not None and players.is_player_token(token):
        try:
            player = _verify_player(current, directory, token)
        except players.TokenExpired:
            raise refusal("CREDENTIAL_EXPIRED", EXPIRED) from None
        if player is None or directory.live(player.app) is None:
            raise refusal("INVALID_CREDENTIAL", BAD_CREDENTIAL)
        found = Principal(PLAYER, player.app, player.holder, player)
    elif directory is not None and player_jwts.looks_like_jwt(token):
        try:
            player = player_jwts.verify(directory, token)
        except players.TokenExpired:
            raise refusal("CREDENTIAL_EXPIRED", EXPIRED) from None
        except player_jwts.JwtRefused:
            raise refusal("INVALID_CREDENTIAL", BAD_JWT) from None
        found = Principal(PLAYER, player.app, player.holder, player)
    else:
        found = Principal(SEAT, None, hash_token(token))
    current.identity = found
    return found


def _verify_player(current: Call, directory: AppDirectory, token: str) -> Player | None:
    """:func:`service.hosting.players.verify`; with the request's first read of its
    game in the same round trip when its route names one (:attr:`Call.first_read`),
    kept for its handler (:meth:`Call.read`)."""
    read = current.first_read
    if read is None:
        return players.verify(directory.registry, token)
    found = players.verify_reading(current.services.store, token, read)
    if found is None:
        return None
    player, result = found
    current.prefetched = (read, result)
    return player


def request_holder() -> str | None:
    """What a seat held by the request's credential keeps: the hash of a seat's
    token, or a player's holder (:func:`service.hosting.players.player_holder`);
    None without a token."""
    found = principal()
    return None if found is None else found.holder


def require_holder() -> str:
    """:func:`request_holder`, or 401 (before any game is read)."""
    holder = request_holder()
    if holder is None:
        raise unauthorized(NO_TOKEN)
    return holder


def require_token() -> str:
    """The request's bearer token, or 401 (before any game is read)."""
    token = bearer_token()
    if token is None:
        raise unauthorized(NO_TOKEN)
    return token


def require_seat(record: GameRecord) -> int:
    """The seat proven by the request's credential, or 401."""
    seat = record.seat_for_holder(require_holder())
    if seat is None:
        raise unauthorized(NOT_SEATED)
    return seat
