"""The route table: every endpoint of the API, declared once.

A :class:`Route` is a path, the view answering it (a flask-smorest view, whose
decorators document it: parameters, bodies, answers) and, per method, what
else the endpoint needs: the rate limit counting its requests and whom it
counts them against, and, for the hottest requests, the handler the fast lane
calls (:mod:`service.api.fastlane`) and the read of its game it makes first (a
player's credential is checked in the same round trip: :mod:`service.api.auth`).
Everything else is derived from :data:`ROUTES`:

- Flask's routes: each view is added to its blueprint under its path (at
  import, as a ``@blp.route`` decorator would), and :data:`BLUEPRINTS` are
  registered in their order (the spec's tags);
- the fast lane's routes (:func:`fast_routes`): the same paths, matched by the
  patterns of Flask's converters, with the template the metrics label them by;
- the rate limits (:func:`counted`), counted before the handler on either
  path, keyed by the endpoints Flask names after the views (a renamed view
  keeps its limit);
- who may call each route in apps mode (:func:`accesses`, checked by
  :mod:`service.api.access`), and the ``security`` the spec declares for each of
  its operations (:func:`securities`), from the route's ``access``;
- CORS (:mod:`service.api.cors`): the methods from Flask's routes, the headers
  from the spec the views document.

Adding an endpoint is one entry here (and its view).  A method named here that
its view does not answer fails at import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flask import Response

from service.api import (
    app_routes,
    app_webhook_routes,
    fairplay_routes,
    following,
    game_routes,
    handlers,
    leaderboard_routes,
    lobby_routes,
    ops_routes,
    player_routes,
    rules_routes,
    webhook_routes,
)
from service.api.access import Access, SecurityRequirements, security
from service.api.blueprint import Blueprint
from service.api.context import Call
from service.api.limits import Limited, Per, Rate
from service.store.game_reads import Read

Handler = Callable[..., Response]
"""A fast lane's handler, called with the path's parameters as keywords."""

FirstRead = Callable[[Call, str], Read[Any] | None]
"""The read a fast lane's handler makes first, of the request and its ``game_id``
(None: none to name for this request)."""

GAME = "/<game_id:game_id>"
PLAYER = "/players/<player_id:player_id>"
BOARD = "/leaderboards/<ruleset:ruleset>/<table_size:table_size>"


@dataclass(frozen=True)
class Route:
    """One path of ``blueprint`` (``rule``, under its ``url_prefix``) and its ``view``."""

    blueprint: Blueprint
    rule: str
    view: Any
    """A ``MethodView`` class, or a view function (one method: GET)."""
    limits: Mapping[str, Limited] = field(default_factory=dict)
    fast: Mapping[str, Handler] = field(default_factory=dict)
    first_reads: Mapping[str, FirstRead] = field(default_factory=dict)
    """Per method answered by the fast lane, the read its handler makes first."""
    access: Access = Access.GAME_SEAT
    """Who may call it in apps mode (:mod:`service.api.access`)."""

    @property
    def template(self) -> str:
        """The path as Flask's rule names it (``/v1/games/<game_id:game_id>``)."""
        return (self.blueprint.url_prefix or "") + self.rule

    @property
    def endpoint(self) -> str:
        """The endpoint Flask names the route by (``games.Moves``)."""
        return f"{self.blueprint.name}.{self.view.__name__}"

    @property
    def methods(self) -> frozenset[str]:
        """The methods the view answers (a function: GET)."""
        return frozenset(getattr(self.view, "methods", None) or {"GET"})


ROUTES: tuple[Route, ...] = (
    Route(
        game_routes.blp,
        "",
        game_routes.Games,
        {"POST": Limited(Rate.CREATE)},
        access=Access.APP_OR_PLAYER,
    ),
    Route(
        game_routes.blp,
        GAME,
        game_routes.Game,
        fast={"GET": handlers.public_view},
        access=Access.GAME,
    ),
    Route(
        game_routes.blp,
        GAME + "/view",
        game_routes.PlayerViewResource,
        fast={"GET": handlers.player_view},
        first_reads={"GET": handlers.player_view_read},
    ),
    Route(
        game_routes.blp,
        GAME + "/players",
        game_routes.Players,
        {"POST": Limited(Rate.JOIN)},
        access=Access.GAME_JOIN,
    ),
    Route(
        game_routes.blp,
        GAME + "/moves",
        game_routes.Moves,
        {"POST": Limited(Rate.MOVES, Per.TOKEN)},  # every attempt counts
        fast={"POST": handlers.make_move},
        first_reads={"POST": handlers.move_read},
    ),
    Route(
        game_routes.blp,
        GAME + "/events",
        game_routes.Events,
        fast={"GET": following.fast},
        access=Access.GAME_STREAM,
    ),
    Route(
        game_routes.blp,
        GAME + "/stream-tickets",
        game_routes.StreamTickets,
        {"POST": Limited(Rate.STREAM_TICKETS, Per.TOKEN)},
    ),
    Route(
        lobby_routes.blp,
        "/games",
        lobby_routes.Listing,
        {"GET": Limited(Rate.LIST)},
        access=Access.APP_OR_PLAYER,
    ),
    Route(
        lobby_routes.blp,
        "/lobby/quick-join",
        lobby_routes.QuickJoin,
        {"POST": Limited(Rate.QUICK_JOIN)},
        access=Access.APP_OR_PLAYER,
    ),
    Route(  # renaming and leaving count as joins
        lobby_routes.blp,
        "/games" + GAME + "/seat",
        lobby_routes.OwnSeat,
        {"PATCH": Limited(Rate.JOIN), "DELETE": Limited(Rate.JOIN)},
    ),
    Route(
        lobby_routes.blp,
        "/games" + GAME + "/resign",
        lobby_routes.Resign,
        {"POST": Limited(Rate.SEAT_CHANGES, Per.TOKEN)},
    ),
    Route(
        fairplay_routes.blp,
        GAME + "/autopilot",
        fairplay_routes.Autopilot,
        {
            "POST": Limited(Rate.SEAT_CHANGES, Per.TOKEN),
            "DELETE": Limited(Rate.SEAT_CHANGES, Per.TOKEN),
        },
    ),
    Route(fairplay_routes.blp, GAME + "/rematch", fairplay_routes.Rematch),
    Route(
        fairplay_routes.blp,
        GAME + "/replay",
        fairplay_routes.Replay,
        {"GET": Limited(Rate.REPLAY)},
        access=Access.GAME,
    ),
    Route(
        rules_routes.blp,
        "/hands/evaluate",
        rules_routes.Evaluate,
        {"POST": Limited(Rate.EVALUATE)},
        access=Access.APP_OR_PLAYER,
    ),
    Route(rules_routes.blp, "/rulesets", rules_routes.Rulesets, access=Access.OPEN),
    Route(ops_routes.blp, "/healthz", ops_routes.healthz, access=Access.OPEN),
    Route(ops_routes.blp, "/readyz", ops_routes.readyz, access=Access.OPEN),
    Route(ops_routes.blp, "/metrics", ops_routes.metrics_view, access=Access.OPEN),
    Route(webhook_routes.blp, GAME + "/webhook", webhook_routes.WebhookLog),
    Route(
        player_routes.blp,
        PLAYER + "/tokens",
        player_routes.PlayerTokens,
        {"POST": Limited(Rate.PLAYER_TOKENS, Per.TOKEN)},
        access=Access.APP,
    ),
    Route(player_routes.blp, PLAYER, player_routes.PlayerRead, access=Access.APP),
    Route(player_routes.blp, PLAYER + "/bar", player_routes.PlayerBar, access=Access.APP),
    Route(player_routes.blp, PLAYER + "/history", player_routes.PlayerHistory, access=Access.APP),
    Route(player_routes.blp, "/me", player_routes.Me, access=Access.PLAYER),
    Route(player_routes.blp, "/me/games", player_routes.MyGames, access=Access.PLAYER),
    Route(player_routes.blp, "/me/history", player_routes.MyHistory, access=Access.PLAYER),
    Route(
        leaderboard_routes.blp,
        BOARD,
        leaderboard_routes.Leaderboard,
        {"GET": Limited(Rate.LIST)},
        access=Access.APP_OR_PLAYER,
    ),
    Route(
        leaderboard_routes.blp,
        BOARD + "/around-me",
        leaderboard_routes.AroundMe,
        {"GET": Limited(Rate.LIST)},
        access=Access.PLAYER,
    ),
    Route(
        leaderboard_routes.blp,
        BOARD + PLAYER,
        leaderboard_routes.PlayerPlace,
        {"GET": Limited(Rate.LIST)},
        access=Access.APP,
    ),
    Route(
        app_routes.blp,
        "/app/games",
        app_routes.AppGames,
        {"GET": Limited(Rate.LIST, Per.TOKEN)},
        access=Access.APP,
    ),
    Route(app_routes.blp, "/games" + GAME + "/abort", app_routes.AbortGame, access=Access.APP),
    Route(
        app_routes.blp,
        "/games" + GAME + "/players/<player_id:player_id>",
        app_routes.RemovePlayer,
        {"DELETE": Limited(Rate.JOIN, Per.TOKEN)},
        access=Access.APP,
    ),
    Route(
        app_webhook_routes.blp, "/deliveries", app_webhook_routes.AppDeliveries, access=Access.APP
    ),
    Route(
        app_webhook_routes.blp,
        "/deliveries/<delivery_id>/redeliver",
        app_webhook_routes.Redeliver,
        access=Access.APP,
    ),
)
"""Every endpoint of the API, in the spec's order (``/openapi.json`` and
``/docs`` are pages of :data:`service.api.ops_routes.docs_blp`)."""

BLUEPRINTS: tuple[Blueprint, ...] = tuple(dict.fromkeys(route.blueprint for route in ROUTES))
"""The blueprints of :data:`ROUTES`, each once, in order (the spec's tags)."""


def _add_to_blueprints(routes: tuple[Route, ...]) -> None:
    for route in routes:
        unknown = {*route.limits, *route.fast, *route.first_reads} - route.methods
        if unknown:
            raise ValueError(f"{route.endpoint} answers no {', '.join(sorted(unknown))}")
        route.blueprint.route(route.rule)(route.view)


_add_to_blueprints(ROUTES)  # once, at import: a blueprint keeps its routes for every app


def accesses(routes: tuple[Route, ...] = ROUTES) -> dict[str, Access]:
    """Endpoint -> who may call it in apps mode, for the access hook on Flask's path."""
    return {route.endpoint: route.access for route in routes}


def securities(routes: tuple[Route, ...] = ROUTES) -> dict[tuple[str, str], SecurityRequirements]:
    """``(path, method)`` of each operation of the spec (``/v1/games/{game_id}``,
    ``post``) -> the ``security`` it declares: that of its route's ``access``."""
    return {
        (CONVERTER.sub(r"{\g<name>}", route.template), method.lower()): security(route.access)
        for route in routes
        for method in route.methods
    }


def counted(routes: tuple[Route, ...] = ROUTES) -> dict[tuple[str, str], Limited]:
    """``(endpoint, method)`` -> its limit, for the limits' hook on Flask's path."""
    return {
        (route.endpoint, method): limited
        for route in routes
        for method, limited in route.limits.items()
    }


@dataclass(frozen=True, slots=True)
class FastRoute:
    """A route the fast lane answers: its path's pattern, the handler, the
    template (the metrics' label), the limit counted first, if any, and the
    read of its game the handler makes first, if named."""

    pattern: re.Pattern[str]
    handler: Handler
    template: str
    limited: Limited | None
    access: Access = Access.GAME_SEAT
    first_read: FirstRead | None = None


CONVERTER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")
"""A parameter of a werkzeug rule: ``<name>`` or ``<converter:name>``."""


def fast_routes(
    converters: Mapping[str, Any], routes: tuple[Route, ...] = ROUTES
) -> dict[str, tuple[FastRoute, ...]]:
    """Method -> the routes the fast lane answers for it, each path matched by
    the patterns of ``converters`` (Flask's ``url_map.converters``: the
    converter classes, each with its ``regex``)."""
    out: dict[str, list[FastRoute]] = {}
    for route in routes:
        for method, handler in route.fast.items():
            pattern = re.compile(_pattern(route.template, converters))
            fast = FastRoute(
                pattern,
                handler,
                route.template,
                route.limits.get(method),
                route.access,
                route.first_reads.get(method),
            )
            out.setdefault(method, []).append(fast)
    return {method: tuple(found) for method, found in out.items()}


def _pattern(template: str, converters: Mapping[str, Any]) -> str:
    """``template`` as a regular expression, each parameter a named group.

    >>> from werkzeug.routing import Map
    >>> _pattern("/v1/games/<game_id>/view", Map().converters)
    '/v1/games/(?P<game_id>[^/]+)/view'
    """
    parts, end = [], 0
    for found in CONVERTER.finditer(template):
        regex = converters[found["converter"] or "default"].regex
        parts += [re.escape(template[end : found.start()]), f"(?P<{found['name']}>{regex})"]
        end = found.end()
    return "".join([*parts, re.escape(template[end:])])
