"""Service configuration, read once from the environment.

:class:`Config` is a frozen, typed snapshot of every setting the service reads;
build it with :meth:`Config.from_env`.  :data:`service.env_vars.ENV_VARS` is the single
table of variables (name, default, description): the parser takes its defaults from
it and :func:`service.env_vars.env_table_markdown` renders it for
``docs/CONFIGURATION.md`` (``make docs``; a test compares), so the two cannot drift
apart.  A bad value
raises :class:`ValueError` naming the variable.

>>> cfg = Config.from_env({})
>>> cfg.redis_url is None, cfg.port, cfg.game_ttl_seconds
(True, 8000, 604800)
>>> Config.from_env({"PORT": "http"})
Traceback (most recent call last):
...
ValueError: PORT: expected an integer, got 'http'
>>> Config.from_env({"RATE_LIMIT_MOVES": "lots"})
Traceback (most recent call last):
...
ValueError: RATE_LIMIT_MOVES: expected a rate such as '30/minute' or '10 per second', got 'lots'
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from service.env_vars import ENV_VARS


def _default_workers() -> int:
    return max(1, min(4, 2 * (os.cpu_count() or 1)))


_DEFAULTS = {var.name: var.default for var in ENV_VARS}
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_RATE = re.compile(
    r"^\s*\d+\s*(/|per)\s*(\d+\s*)?(second|minute|hour|day|month|year)s?\s*$", re.IGNORECASE
)


class _Env:
    """Typed getters over an environment mapping; blank values mean "use the default"."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    def raw(self, name: str) -> str:
        value = self._environ.get(name, "").strip()
        return value if value else _DEFAULTS[name]

    def text(self, name: str) -> str | None:
        return self.raw(name) or None

    def boolean(self, name: str) -> bool:
        value = self.raw(name).lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise ValueError(f"{name}: expected true/false (or 1/0, yes/no, on/off), got {value!r}")

    def integer(self, name: str, *, minimum: int, maximum: int | None = None) -> int:
        value = self.raw(name)
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"{name}: expected an integer, got {value!r}") from None
        if number < minimum or (maximum is not None and number > maximum):
            bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
            raise ValueError(f"{name}: must be {bound}, got {number}")
        return number

    def seconds(self, name: str, *, minimum: float, maximum: float) -> float:
        value = self.raw(name)
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{name}: expected a number of seconds, got {value!r}") from None
        if not minimum <= number <= maximum:
            raise ValueError(f"{name}: must be between {minimum:g} and {maximum:g}, got {value}")
        return number

    def rate(self, name: str) -> str:
        value = self.raw(name)
        if not all(_RATE.match(part) for part in value.split(";")):
            raise ValueError(
                f"{name}: expected a rate such as '30/minute' or '10 per second', got {value!r}"
            )
        return value

    def choice(self, name: str, choices: tuple[str, ...]) -> str:
        value = self.raw(name).upper()
        if value not in choices:
            raise ValueError(f"{name}: expected one of {', '.join(choices)}, got {value!r}")
        return value


@dataclass(frozen=True)
class Config:
    """Every setting of the service; see :data:`ENV_VARS` for meanings and defaults."""

    redis_url: str | None = field(default=None, repr=False)  # may hold a password
    redis_cluster: bool = False
    redis_sentinels: tuple[tuple[str, int], ...] = ()
    redis_sentinel_master: str | None = None
    redis_wait_replicas: int = 0
    redis_wait_aof: bool = False
    redis_wait_timeout_ms: int = 500
    redis_timeout_seconds: float = 2.0
    redis_max_connections: int = 4
    allow_seeded_games: bool = False
    game_ttl_seconds: int = 604800
    archive_ttl_seconds: int = 31536000
    idempotency_ttl_seconds: int = 86400
    long_poll_max_seconds: int = 30
    sse_heartbeat_seconds: float = 15.0
    stream_ticket_seconds: int = 120
    log_level: str = "INFO"
    max_body_bytes: int = 65536
    rate_limits_enabled: bool = True
    rate_limit_create: str = "30/minute"
    rate_limit_join: str = "60/minute"
    rate_limit_moves: str = "600/minute"
    rate_limit_auth_failures: str = "30/minute"
    rate_limit_player_tokens: str = "600/minute"
    rate_limit_evaluate: str = "60/minute"
    rate_limit_list: str = "120/minute"
    rate_limit_quick_join: str = "30/minute"
    rate_limit_seat_changes: str = "30/minute"
    rate_limit_stream_tickets: str = "30/minute"
    rate_limit_replay: str = "60/minute"
    stream_limit_per_address: int = 100
    stream_limit_per_seat: int = 8
    lobby_waiting_seconds: int = 3600
    lobby_turn_seconds: int = 60
    lobby_turn_max_seconds: int = 600
    lobby_autopilot_after: int = 2
    lobby_seats_per_address: int = 4
    lobby_listed_per_address: int = 2
    lobby_live_seconds: int = 60
    quickjoin_skill_base: float = 3.0
    quickjoin_skill_widen_per_second: float = 0.2
    quickjoin_skill_max: float = 25.0
    quickjoin_bot_fill_seconds: int = 0
    leaderboard_shards: int = 16
    leaderboard_min_games: int = 5
    auth_mode: str = "OPEN"
    app_creates_per_minute: int = 600
    app_concurrent_games: int = 10000
    app_moves_per_minute: int = 60000
    app_listings_per_minute: int = 6000
    app_player_moves_per_minute: int = 600
    jwks_cache_seconds: float = 300.0
    jwks_refetch_seconds: float = 30.0
    jwks_timeout_seconds: float = 3.0
    fast_lane: bool = True
    solver: str = "C"
    bot_cache_mb: int = 64
    bot_expert_samples: int = 32
    trusted_proxy_hops: int = 0
    cors_origins: tuple[str, ...] = ()
    webhook_allow_http: bool = False
    webhook_allow_loopback: bool = False
    webhook_retry_seconds: int = 86400
    webhook_timeout_seconds: float = 10.0
    webhook_concurrency: int = 16
    webhook_host_concurrency: int = 4
    webhook_sweep_seconds: float = 10.0
    webhook_claim_seconds: float = 60.0
    bot_concurrency: int = 4
    bot_sweep_seconds: float = 5.0
    bot_claim_seconds: float = 30.0
    bot_idle_move_seconds: float = 0.25
    worker_metrics_port: int = 0
    host: str = "127.0.0.1"
    port: int = 8000
    web_concurrency: int = 1
    gunicorn_worker_connections: int = 5000
    body_timeout_seconds: int = 10
    gunicorn_timeout: int = 60

    @property
    def durable_writes(self) -> bool:
        """True when a change is acknowledged only once confirmed (``WAIT``/``WAITAOF``)."""
        return self.redis_wait_replicas > 0 or self.redis_wait_aof

    @property
    def apps_mode(self) -> bool:
        """``AUTH_MODE=apps``: every request is an app's, its player's or its seat's."""
        return self.auth_mode == "APPS"

    @property
    def embedded_store(self) -> bool:
        """True when no REDIS_URL is set: the in-process store, shared by one process only."""
        return self.redis_url is None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        """Read the configuration from ``environ`` (default :data:`os.environ`).

        Raises :class:`ValueError` naming the variable when a value is malformed.
        """
        env = _Env(os.environ if environ is None else environ)
        redis_url = env.text("REDIS_URL")
        redis_cluster = env.boolean("REDIS_CLUSTER")
        if redis_url is not None and not redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(
                f"REDIS_URL: expected a redis://, rediss:// or unix:// URL, got {redis_url!r}"
            )
        if redis_cluster and redis_url is None:
            raise ValueError("REDIS_CLUSTER: set REDIS_URL to a cluster node as well")
        if env.choice("AUTH_MODE", ("OPEN", "APPS")) == "APPS" and redis_url is None:
            raise ValueError(
                "AUTH_MODE: apps needs REDIS_URL (apps are made with three-thirteen-admin, "
                "which cannot reach the embedded store)"
            )
        sentinels = _sentinels(env.raw("REDIS_SENTINELS"))
        sentinel_master = env.text("REDIS_SENTINEL_MASTER")
        if sentinels and (redis_url is None or redis_url.startswith("unix://")):
            raise ValueError(
                "REDIS_SENTINELS: set REDIS_URL too (redis:// or rediss://: its credentials, "
                "database and TLS settings are used for the primary the Sentinels name)"
            )
        if sentinels and redis_cluster:
            raise ValueError("REDIS_SENTINELS: not with REDIS_CLUSTER (a cluster fails over alone)")
        if sentinels and sentinel_master is None:
            raise ValueError("REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS")
        if sentinel_master is not None and not sentinels:
            raise ValueError("REDIS_SENTINEL_MASTER: set REDIS_SENTINELS as well")
        wait_replicas = env.integer("REDIS_WAIT_REPLICAS", minimum=0, maximum=100)
        wait_aof = env.boolean("REDIS_WAIT_AOF")
        if (wait_replicas or wait_aof) and redis_url is None:
            raise ValueError(
                "REDIS_WAIT_REPLICAS, REDIS_WAIT_AOF: need a Redis (REDIS_URL); the embedded "
                "store has neither replicas nor an append-only file"
            )
        workers = env.raw("WEB_CONCURRENCY")
        config = cls(
            redis_url=redis_url,
            redis_cluster=redis_cluster,
            redis_sentinels=sentinels,
            redis_sentinel_master=sentinel_master,
            redis_wait_replicas=wait_replicas,
            redis_wait_aof=wait_aof,
            redis_wait_timeout_ms=env.integer("REDIS_WAIT_TIMEOUT_MS", minimum=1, maximum=60_000),
            redis_timeout_seconds=env.seconds("REDIS_TIMEOUT_SECONDS", minimum=0.1, maximum=60),
            redis_max_connections=env.integer("REDIS_MAX_CONNECTIONS", minimum=1, maximum=1000),
            allow_seeded_games=env.boolean("ALLOW_SEEDED_GAMES"),
            game_ttl_seconds=env.integer("GAME_TTL_SECONDS", minimum=60),
            archive_ttl_seconds=env.integer("ARCHIVE_TTL_SECONDS", minimum=60),
            idempotency_ttl_seconds=env.integer("IDEMPOTENCY_TTL_SECONDS", minimum=1),
            long_poll_max_seconds=env.integer("LONG_POLL_MAX_SECONDS", minimum=0, maximum=300),
            sse_heartbeat_seconds=env.seconds("SSE_HEARTBEAT_SECONDS", minimum=0.05, maximum=300),
            stream_ticket_seconds=env.integer("STREAM_TICKET_SECONDS", minimum=1, maximum=600),
            log_level=env.choice("LOG_LEVEL", _LOG_LEVELS),
            max_body_bytes=env.integer("MAX_BODY_BYTES", minimum=1024),
            rate_limits_enabled=env.boolean("RATE_LIMITS"),
            rate_limit_create=env.rate("RATE_LIMIT_CREATE"),
            rate_limit_join=env.rate("RATE_LIMIT_JOIN"),
            rate_limit_moves=env.rate("RATE_LIMIT_MOVES"),
            rate_limit_auth_failures=env.rate("RATE_LIMIT_AUTH_FAILURES"),
            rate_limit_player_tokens=env.rate("RATE_LIMIT_PLAYER_TOKENS"),
            rate_limit_evaluate=env.rate("RATE_LIMIT_EVALUATE"),
            rate_limit_list=env.rate("RATE_LIMIT_LIST"),
            rate_limit_quick_join=env.rate("RATE_LIMIT_QUICK_JOIN"),
            rate_limit_seat_changes=env.rate("RATE_LIMIT_SEAT_CHANGES"),
            rate_limit_stream_tickets=env.rate("RATE_LIMIT_STREAM_TICKETS"),
            rate_limit_replay=env.rate("RATE_LIMIT_REPLAY"),
            stream_limit_per_address=env.integer(
                "STREAM_LIMIT_PER_ADDRESS", minimum=0, maximum=1_000_000
            ),
            stream_limit_per_seat=env.integer(
                "STREAM_LIMIT_PER_SEAT", minimum=0, maximum=1_000_000
            ),
            lobby_waiting_seconds=env.integer("LOBBY_WAITING_SECONDS", minimum=1),
            lobby_turn_seconds=env.integer("LOBBY_TURN_SECONDS", minimum=1, maximum=86400),
            lobby_turn_max_seconds=env.integer("LOBBY_TURN_MAX_SECONDS", minimum=5, maximum=86400),
            lobby_autopilot_after=env.integer("LOBBY_AUTOPILOT_AFTER", minimum=1, maximum=100),
            lobby_seats_per_address=env.integer(
                "LOBBY_SEATS_PER_ADDRESS", minimum=0, maximum=10000
            ),
            lobby_listed_per_address=env.integer(
                "LOBBY_LISTED_PER_ADDRESS", minimum=0, maximum=10000
            ),
            lobby_live_seconds=env.integer("LOBBY_LIVE_SECONDS", minimum=1, maximum=86400),
            quickjoin_skill_base=env.seconds("QUICKJOIN_SKILL_BASE", minimum=0, maximum=1e6),
            quickjoin_skill_widen_per_second=env.seconds(
                "QUICKJOIN_SKILL_WIDEN_PER_SECOND", minimum=0, maximum=1e6
            ),
            quickjoin_skill_max=env.seconds("QUICKJOIN_SKILL_MAX", minimum=0, maximum=1e6),
            quickjoin_bot_fill_seconds=env.integer(
                "QUICKJOIN_BOT_FILL_SECONDS", minimum=0, maximum=86400
            ),
            leaderboard_shards=env.integer("LEADERBOARD_SHARDS", minimum=1, maximum=1024),
            leaderboard_min_games=env.integer(
                "LEADERBOARD_MIN_GAMES", minimum=0, maximum=1_000_000
            ),
            auth_mode=env.choice("AUTH_MODE", ("OPEN", "APPS")),
            app_creates_per_minute=env.integer("APP_CREATES_PER_MINUTE", minimum=0),
            app_concurrent_games=env.integer("APP_CONCURRENT_GAMES", minimum=0),
            app_moves_per_minute=env.integer("APP_MOVES_PER_MINUTE", minimum=0),
            app_listings_per_minute=env.integer("APP_LISTINGS_PER_MINUTE", minimum=0),
            app_player_moves_per_minute=env.integer("APP_PLAYER_MOVES_PER_MINUTE", minimum=0),
            jwks_cache_seconds=env.seconds("JWKS_CACHE_SECONDS", minimum=1, maximum=86400),
            jwks_refetch_seconds=env.seconds("JWKS_REFETCH_SECONDS", minimum=0, maximum=3600),
            jwks_timeout_seconds=env.seconds("JWKS_TIMEOUT_SECONDS", minimum=0.1, maximum=30),
            fast_lane=env.boolean("FAST_LANE"),
            solver=env.choice("SOLVER", ("C", "PYTHON")),
            bot_cache_mb=env.integer("BOT_CACHE_MB", minimum=1, maximum=65536),
            bot_expert_samples=env.integer("BOT_EXPERT_SAMPLES", minimum=1, maximum=1000),
            trusted_proxy_hops=env.integer("TRUSTED_PROXY_HOPS", minimum=0, maximum=10),
            cors_origins=tuple(
                origin.strip() for origin in env.raw("CORS_ORIGINS").split(",") if origin.strip()
            ),
            webhook_allow_http=env.boolean("WEBHOOK_ALLOW_HTTP"),
            webhook_allow_loopback=env.boolean("WEBHOOK_ALLOW_LOOPBACK"),
            webhook_retry_seconds=env.integer("WEBHOOK_RETRY_SECONDS", minimum=1),
            webhook_timeout_seconds=env.seconds("WEBHOOK_TIMEOUT_SECONDS", minimum=0.1, maximum=60),
            webhook_concurrency=env.integer("WEBHOOK_CONCURRENCY", minimum=1, maximum=1000),
            webhook_host_concurrency=env.integer(
                "WEBHOOK_HOST_CONCURRENCY", minimum=1, maximum=1000
            ),
            webhook_sweep_seconds=env.seconds("WEBHOOK_SWEEP_SECONDS", minimum=0.1, maximum=3600),
            webhook_claim_seconds=env.seconds("WEBHOOK_CLAIM_SECONDS", minimum=1, maximum=86400),
            bot_concurrency=env.integer("BOT_CONCURRENCY", minimum=1, maximum=256),
            bot_sweep_seconds=env.seconds("BOT_SWEEP_SECONDS", minimum=0.1, maximum=3600),
            bot_claim_seconds=env.seconds("BOT_CLAIM_SECONDS", minimum=1, maximum=3600),
            bot_idle_move_seconds=env.seconds("BOT_IDLE_MOVE_SECONDS", minimum=0, maximum=60),
            worker_metrics_port=env.integer("WORKER_METRICS_PORT", minimum=0, maximum=65535),
            host=env.raw("HOST"),
            port=env.integer("PORT", minimum=0, maximum=65535),
            web_concurrency=(
                env.integer("WEB_CONCURRENCY", minimum=1, maximum=256)
                if workers
                else _default_workers()
            ),
            gunicorn_worker_connections=env.integer(
                "GUNICORN_WORKER_CONNECTIONS", minimum=1, maximum=100_000
            ),
            body_timeout_seconds=env.integer("BODY_TIMEOUT_SECONDS", minimum=1, maximum=600),
            gunicorn_timeout=env.integer("GUNICORN_TIMEOUT", minimum=1),
        )
        if (
            config.durable_writes
            and config.redis_wait_timeout_ms > 500 * config.redis_timeout_seconds
        ):
            # the wait's answer must come back well within a read's own wait
            raise ValueError("REDIS_WAIT_TIMEOUT_MS: at most half of REDIS_TIMEOUT_SECONDS")
        if config.stream_ticket_seconds < 2 * config.sse_heartbeat_seconds:
            # an open stream renews its ticket at a heartbeat past half the ticket's life
            raise ValueError("STREAM_TICKET_SECONDS: at least twice SSE_HEARTBEAT_SECONDS")
        if config.lobby_turn_seconds > config.lobby_turn_max_seconds:
            raise ValueError("LOBBY_TURN_SECONDS: at most LOBBY_TURN_MAX_SECONDS")
        if config.webhook_claim_seconds < 2 * config.webhook_timeout_seconds:
            # an attempt must end long before its claim, renewed as it starts, can lapse
            raise ValueError("WEBHOOK_CLAIM_SECONDS: at least twice WEBHOOK_TIMEOUT_SECONDS")
        return config


def _sentinels(value: str) -> tuple[tuple[str, int], ...]:
    """``host:port,host:port`` as ``((host, port), ...)``.

    >>> _sentinels("10.0.0.5:26379, sentinel-b:26380")
    (('10.0.0.5', 26379), ('sentinel-b', 26380))
    >>> _sentinels("10.0.0.5")
    Traceback (most recent call last):
    ...
    ValueError: REDIS_SENTINELS: expected host:port[,host:port...], got '10.0.0.5'
    """
    found = []
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        host, _, port = part.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"REDIS_SENTINELS: expected host:port[,host:port...], got {part!r}")
        found.append((host.strip("[]"), int(port)))
    return tuple(found)
