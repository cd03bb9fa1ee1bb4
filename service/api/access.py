"""Who may call what in ``AUTH_MODE=apps``: each route of the route table
(:mod:`service.api.routes`) names its :class:`Access`, checked by :func:`check`
before its handler on either path (Flask's hook, the fast lane), after its rate limit.

- A game's paths: its app's backend, its app's players, or a seat's token of it.
  A game's app is part of its id (:func:`~service.hosting.tokens.app_of_game`), so an
  app or player of another app is answered 404 ``GAME_NOT_FOUND`` without a read (and
  the miss counts against the address, as a refused credential does); so is
  everyone for a game of a revoked app.  A seat's token is proven by the handler
  where it needs a seat (views, moves, seat changes), and here, by the game's
  seats, where it does not (the public view, the replay).  A stream ticket
  (``?ticket=``) stands for its seat, as the events handler checks.
- Creating games, the lobby, quick-join and the evaluator: an app's or a player's
  credential.  Minting and revoking player tokens: an app's.  ``/v1/me/...``: a
  player's.  Health, metrics, the rulesets and the spec: anyone.

Open mode checks nothing here: every request is what it was before apps.  A
request let in is labelled with its app for the metrics (:mod:`service.api.metrics`).

The spec declares the same, per operation (:func:`security`): the security schemes
an :class:`Access` takes, any one of them; ``[]`` for :attr:`Access.OPEN`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from flask import Flask, request

from service.api import handlers, metrics
from service.api.auth import (
    APP,
    NOT_SEATED,
    PLAYER,
    SEAT,
    Principal,
    principal,
    refusal,
    unauthorized,
)
from service.api.context import Call, call
from service.hosting.tokens import app_of_game

NOT_THIS = "this {kind} credential may not do this; {needs}"
NO_CREDENTIAL = "send Authorization: Bearer <key or token> of an app, a player or a seat"
NO_SUCH_GAME = "no game with this id"


class Access(Enum):
    """Who may call a route in apps mode."""

    OPEN = "anyone"
    APP = "an app's secret key"
    PLAYER = "a player's token"
    APP_OR_PLAYER = "an app's secret key or a player's token"
    GAME = "the game's app, one of its players, or one of its seats"
    GAME_SEAT = "the game's app, one of its players, or one of its seats (the handler checks)"
    GAME_STREAM = (
        "the game's app, one of its players, one of its seats, or a stream ticket "
        "(the handler checks)"
    )
    GAME_JOIN = "the game's app or one of its players"


ALLOWED: dict[Access, frozenset[str]] = {
    Access.APP: frozenset({APP}),
    Access.PLAYER: frozenset({PLAYER}),
    Access.APP_OR_PLAYER: frozenset({APP, PLAYER}),
    Access.GAME: frozenset({APP, PLAYER, SEAT}),
    Access.GAME_SEAT: frozenset({APP, PLAYER, SEAT}),
    Access.GAME_STREAM: frozenset({APP, PLAYER, SEAT}),
    Access.GAME_JOIN: frozenset({APP, PLAYER}),
}

SCHEMES = {APP: "appKey", PLAYER: "playerToken", SEAT: "bearer"}
"""The spec's security scheme of each kind of credential (``components.securitySchemes``)."""
TICKET_SCHEME = "streamTicket"
"""The spec's security scheme of a stream ticket (``?ticket=``)."""

SecurityRequirements = list[dict[str, list[str]]]


def security(access: Access) -> SecurityRequirements:
    """The spec's ``security`` of an operation whose route takes ``access``: one
    requirement per scheme it takes, any one of which is enough (in the order appKey,
    playerToken, bearer, streamTicket); ``[]`` (no credential) for :attr:`Access.OPEN`."""
    kinds = ALLOWED.get(access, frozenset())
    names = [scheme for kind, scheme in SCHEMES.items() if kind in kinds]
    if access is Access.GAME_STREAM:
        names.append(TICKET_SCHEME)
    return [{name: []} for name in names]


def check(current: Call, access: Access, params: Mapping[str, object]) -> None:
    """Refuse the request (401, 403 or 404) unless ``access`` lets its credential
    call the route; nothing in open mode."""
    directory = current.services.apps
    if directory is None or access is Access.OPEN:
        return
    game_id = params.get("game_id")
    owner = None
    if isinstance(game_id, str):
        owner = app_of_game(game_id)
        if owner is not None and directory.live(owner) is None:
            raise refusal("GAME_NOT_FOUND", NO_SUCH_GAME)
    found = principal(current)
    if found is None:
        if access is Access.GAME_STREAM and "ticket=" in current.environ.get("QUERY_STRING", ""):
            _label(current, owner)
            return  # a stream ticket, which the handler checks (the events')
        raise unauthorized(NO_CREDENTIAL)
    if found.kind not in ALLOWED[access]:
        needs = f"this needs {access.value}"
        raise refusal("CREDENTIAL_NOT_ALLOWED", NOT_THIS.format(kind=found.kind, needs=needs))
    if isinstance(game_id, str):
        _check_game(found, access, game_id)
    _label(current, found.app or owner)


def _label(current: Call, app: str | None) -> None:
    """The request's ``app`` label for the metrics: an app it was let in for (a
    live app's credential, or a live app's game), never one a client names."""
    if app is not None:
        metrics.label_app(current.environ, app)


def _check_game(found: Principal, access: Access, game_id: str) -> None:
    if found.kind != SEAT:
        if app_of_game(game_id) != found.app:
            raise refusal("GAME_NOT_FOUND", NO_SUCH_GAME)
        return
    if access is Access.GAME and handlers.seat_held_by(game_id, found.holder) is None:
        raise unauthorized(NOT_SEATED)


def install(app: Flask, accesses: Mapping[str, Access]) -> None:
    """Check each request of Flask's path before its view (after its rate limit):
    ``accesses`` maps endpoints to their :class:`Access`
    (:func:`service.api.routes.accesses`); an endpoint not named there is open."""

    @app.before_request
    def _check_access() -> None:
        access = accesses.get(request.endpoint or "")
        if access is not None:
            check(call(), access, request.view_args or {})
