"""The application factory: ``create_app(config)`` builds the Flask app."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask
from flask_smorest import Api
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import BaseConverter

from service import logs
from service.api import access, app_limits, limits, metrics, ops_routes, problems, routes
from service.api.context import Services
from service.api.cors import Cors, CorsPolicy
from service.api.fastlane import FastLane
from service.api.middleware import Middleware
from service.api.schemas import (
    event_schemas,
    headers,
    move_schemas,
    option_schemas,
    outputs,
)
from service.api.schemas.fields import component_property
from service.api.spec import finalize_spec
from service.api.stream_caps import StreamCaps
from service.config import Config
from service.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from service.hosting import bot_turns
from service.hosting.apps import AppDirectory
from service.hosting.jwks import JwksCache
from service.hosting.players import PLAYER_ID_PATTERN
from service.hosting.tokens import GAME_ID_PATTERN
from service.store import GameStore, StoreUnavailable

API_VERSION = "1.0.0"

log = logging.getLogger(__name__)

GAME_ID_SCHEMA = {"type": "string", "pattern": f"^{GAME_ID_PATTERN}$"}


class GameIdConverter(BaseConverter):
    """Game ids in paths; anything else is a plain 404 before reaching Redis."""

    regex = GAME_ID_PATTERN


class PlayerIdConverter(BaseConverter):
    """An app's id for a player, in paths (anything else: a plain 404)."""

    regex = PLAYER_ID_PATTERN


class RulesetConverter(BaseConverter):
    """A ruleset's name in paths (documented as the ``Ruleset`` enum): any segment,
    so that a name of no ruleset reaches its handler, which says what the rulesets are."""


class TableSizeConverter(BaseConverter):
    """A table size in paths (documented as 2 to 8 seats): any segment, so that a size
    of no table reaches its handler, which says what the sizes are."""


def _spec_options() -> dict[str, object]:
    return {
        "info": {
            "description": (
                "Host games of the rummy card game Three Thirteen. Players act with "
                "`Authorization: Bearer <token>`; errors are RFC 9457 problem details.\n\n"
                "Each operation's `security` lists the credentials it takes with "
                "`AUTH_MODE=apps`, any one of them (`[]`: none). With `AUTH_MODE=open` "
                "(development) there are no apps nor players: an operation takes a "
                "seat's token where it acts for a seat, and no credential elsewhere "
                "(docs/AUTH.md)."
            )
        },
        "components": {
            "securitySchemes": {
                "appKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An app's secret key (`t13_sk_...`), for the app's "
                    "backend only (AUTH_MODE=apps; docs/AUTH.md)",
                },
                "playerToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A player token (`t13_pt_...`) minted by the app's "
                    "backend, or a JWT the app signs; acts for every seat the player holds "
                    "(AUTH_MODE=apps)",
                },
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A seat's token (answered once when the seat is taken)",
                },
                "streamTicket": {
                    "type": "apiKey",
                    "in": "query",
                    "name": "ticket",
                    "description": "A stream ticket (`POST /v1/games/{game_id}/stream-tickets`"
                    "), which proves its seat for the events of its game",
                },
            },
        },
        "servers": [{"url": "/"}],
    }


class ProblemApi(Api):
    """flask-smorest's Api with error responses documented as problem+json."""

    ERROR_SCHEMA = outputs.Problem

    def init_app(self, app: Flask, **kwargs: Any) -> None:
        # flask-smorest registers its stock error responses (the spec's
        # components) in init_app, with the default content type; every error
        # this API sends is application/problem+json.  The routes, registered
        # after, keep the default.
        default = self.DEFAULT_RESPONSE_CONTENT_TYPE
        self.DEFAULT_RESPONSE_CONTENT_TYPE = problems.PROBLEM_JSON
        try:
            super().init_app(app, **kwargs)
        finally:
            self.DEFAULT_RESPONSE_CONTENT_TYPE = default


def _register_components(api: Api) -> None:
    """The spec's components the routes refer to by name: header parameters and
    response headers, the ``Move`` and ``Event`` unions, the options."""
    converter = api.ma_plugin.converter
    assert converter is not None  # made as the plugin joined the spec (Api's init_app)
    converter.add_attribute_function(component_property)
    headers.register_spec(api.spec)
    move_schemas.register_spec(api.spec)
    event_schemas.register_spec(api.spec)
    api.spec.components.schema("Options", schema=option_schemas.Options)
    api.spec.components.schema("OptionsIn", schema=option_schemas.OptionsIn)


def _check_durability(store: GameStore) -> None:
    """Refuse to start (:class:`~service.store.StoreMisconfigured` raised) when the settings ask
    Redis for confirmations it cannot give (``REDIS_WAIT_AOF`` before Redis 7.2);
    warn when it cannot be asked now (it is then asked by each write) or has
    fewer replicas than ``REDIS_WAIT_REPLICAS`` asks for."""
    try:
        warnings = store.check_durability()
    except StoreUnavailable as exc:
        warnings = [f"could not check REDIS_WAIT_REPLICAS / REDIS_WAIT_AOF against Redis: {exc}"]
    for warning in warnings:
        log.warning("%s", warning)


def create_app(config: Config | None = None, store: GameStore | None = None) -> Flask:
    """Build the app for ``config`` (default: from the environment)."""
    config = config or Config.from_env()
    logs.configure(config.log_level)
    bot_turns.configure(config)
    if config.redis_url is None:
        log.warning(
            "REDIS_URL is not set: games live in an embedded in-process store "
            "(lost on restart, one process only). Not for production."
        )
    app = Flask(__name__)
    app.config.update(
        API_TITLE="Three Thirteen",
        API_VERSION=API_VERSION,
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX=None,  # /openapi.json is served by service.api.ops_routes
        API_SPEC_OPTIONS=_spec_options(),
        MAX_CONTENT_LENGTH=config.max_body_bytes,
        JSON_SORT_KEYS=False,
    )
    rate_limits = limits.RateLimits.from_config(config)
    store = store or GameStore.from_config(config)
    _check_durability(store)
    directory = None
    if config.apps_mode:
        jwks = JwksCache(
            config.jwks_cache_seconds, config.jwks_refetch_seconds, config.jwks_timeout_seconds
        )
        directory = AppDirectory(store.apps, jwks=jwks)
    services = Services(config, store, rate_limits, StreamCaps.from_config(config), directory)
    app.extensions["t13"] = services
    app.url_map.converters["game_id"] = GameIdConverter
    app.url_map.converters["player_id"] = PlayerIdConverter
    app.url_map.converters["ruleset"] = RulesetConverter
    app.url_map.converters["table_size"] = TableSizeConverter
    api = ProblemApi(app)
    app.extensions["t13_spec"] = api.spec
    api.register_converter(GameIdConverter, lambda _c: dict(GAME_ID_SCHEMA))
    api.register_converter(
        PlayerIdConverter, lambda _c: {"type": "string", "pattern": f"^{PLAYER_ID_PATTERN}$"}
    )
    api.register_converter(RulesetConverter, lambda _c: {"$ref": "#/components/schemas/Ruleset"})
    api.register_converter(
        TableSizeConverter,
        lambda _c: {"type": "integer", "minimum": MIN_PLAYERS, "maximum": MAX_PLAYERS},
    )
    _register_components(api)
    for blueprint in routes.BLUEPRINTS:  # the route table's, its views added already
        api.register_blueprint(blueprint)
    app.register_blueprint(ops_routes.docs_blp)
    problems.register(app)
    metrics.install(app)
    if rate_limits is not None:
        app_limits.install(app, routes.counted())
    access.install(app, routes.accesses())
    app.extensions["t13_securities"] = routes.securities()  # the spec's, per operation
    cors = None
    if config.cors_origins:  # what a page may send and read: what the routes and spec say
        spec = finalize_spec(api.spec.to_dict(), app.extensions["t13_securities"])
        app.extensions["t13_spec_dict"] = spec  # served as /openapi.json
        cors = Cors(config.cors_origins, CorsPolicy.derive(app.url_map, spec))

    # Each layer is kept as its bound ``__call__``: calling a bound method stays in
    # the interpreter's loop, calling an instance recurses in C, and the greenlet of
    # a client waiting under the layers saves that C stack (about 650 bytes a layer).
    if config.fast_lane:
        lane = FastLane(app.wsgi_app, services, routes.fast_routes(app.url_map.converters))
        app.wsgi_app = lane.__call__  # type: ignore[method-assign]
    app.wsgi_app = Middleware(  # type: ignore[method-assign]
        app.wsgi_app, cors, config.redis_timeout_seconds, config.max_body_bytes
    ).__call__
    if config.trusted_proxy_hops:
        # Outermost: REMOTE_ADDR is the client's before anything (limits, logs) reads it;
        # gunicorn's access log reads the same environ once the answer is sent.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=config.trusted_proxy_hops).__call__  # type: ignore[method-assign]
    return app
