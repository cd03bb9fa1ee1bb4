"""Every environment variable the service reads: its name, its default and what it
means -- the one table :class:`service.config.Config` takes its defaults from and
``docs/CONFIGURATION.md`` is rendered from (:func:`env_table_markdown`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EnvVar:
    """One environment variable: its name, default (as text; "" = unset) and meaning."""

    name: str
    default: str
    description: str


ENV_VARS: tuple[EnvVar, ...] = (
    EnvVar(
        "REDIS_URL",
        "",
        "Redis URL, e.g. `redis://127.0.0.1:6379/0` (`rediss://` for TLS). Unset: an embedded "
        "in-process store (one worker only, lost on restart, not for production).",
    ),
    EnvVar("REDIS_CLUSTER", "false", "Treat `REDIS_URL` as a Redis Cluster node."),
    EnvVar(
        "REDIS_SENTINELS",
        "",
        "Comma-separated `host:port` of Redis Sentinels, e.g. `10.0.0.5:26379,10.0.0.6:26379`: "
        "the primary is the one they name `REDIS_SENTINEL_MASTER`, and a promoted replica is "
        "followed without a restart. `REDIS_URL` still gives the scheme (`rediss://`: TLS), "
        "user, password and database; its host and port are not used. Empty: no Sentinel.",
    ),
    EnvVar(
        "REDIS_SENTINEL_MASTER",
        "",
        "The name the Sentinels monitor the primary under (`sentinel monitor <name> ...`); "
        "required with `REDIS_SENTINELS`.",
    ),
    EnvVar(
        "REDIS_WAIT_REPLICAS",
        "0",
        "Acknowledge a change (create, join, move, seat change...) only once this many "
        "replicas confirm they have it (`WAIT`), else answer 503 `STORE_UNAVAILABLE` (the "
        "change may or may not last; a retry with the same `Idempotency-Key` is safe). "
        "0: no wait (replication is asynchronous: a failover can lose the last changes).",
    ),
    EnvVar(
        "REDIS_WAIT_AOF",
        "false",
        "Acknowledge a change only once the primary has written it to its append-only file "
        "and fsynced it (`WAITAOF 1 0`), else 503 as above. Needs Redis 7.2 or later with "
        "`appendonly yes`: the service refuses to start otherwise.",
    ),
    EnvVar(
        "REDIS_WAIT_TIMEOUT_MS",
        "500",
        "Most `REDIS_WAIT_REPLICAS` and `REDIS_WAIT_AOF` each wait for their confirmation; "
        "at most half of `REDIS_TIMEOUT_SECONDS`.",
    ),
    EnvVar(
        "REDIS_TIMEOUT_SECONDS",
        "2",
        "Most a request waits on Redis in all (connects, retries, every command; a long "
        "poll's own wait aside) before answering 503 `STORE_UNAVAILABLE`.",
    ),
    EnvVar(
        "REDIS_MAX_CONNECTIONS",
        "4",
        "Redis connections each pool of a worker may hold (the game store's, the rate "
        "limiter's); a request finding them all busy waits within `REDIS_TIMEOUT_SECONDS`. "
        "Waiting clients need none: each worker also holds one subscriber connection per "
        "Redis shard, shared by all of them.",
    ),
    EnvVar("ALLOW_SEEDED_GAMES", "false", "Honour `seed` when creating a game (tests, replays)."),
    EnvVar(
        "GAME_TTL_SECONDS", "604800", "A game is deleted after this long without a change (7 days)."
    ),
    EnvVar(
        "ARCHIVE_TTL_SECONDS",
        "31536000",
        "A finished game's archive (its replay, results and players, compressed) and its "
        "entries in its players' histories are kept this long after it finished (365 days), "
        "whatever `GAME_TTL_SECONDS` does to the live game.",
    ),
    EnvVar("IDEMPOTENCY_TTL_SECONDS", "86400", "How long an `Idempotency-Key` is remembered."),
    EnvVar("LONG_POLL_MAX_SECONDS", "30", "Upper bound of `wait` on the events endpoint."),
    EnvVar(
        "SSE_HEARTBEAT_SECONDS",
        "15",
        "A quiet event stream sends a comment this often, so proxies keep it open.",
    ),
    EnvVar(
        "STREAM_TICKET_SECONDS",
        "120",
        "How long a stream ticket (`POST /v1/games/{id}/stream-tickets`) stays valid after its "
        "issue or last use (an open stream renews it); at least twice `SSE_HEARTBEAT_SECONDS`.",
    ),
    EnvVar("LOG_LEVEL", "INFO", "DEBUG, INFO, WARNING, ERROR or CRITICAL."),
    EnvVar("MAX_BODY_BYTES", "65536", "Largest request body accepted (413 beyond)."),
    EnvVar("RATE_LIMITS", "true", "Enable per-client rate limits."),
    EnvVar("RATE_LIMIT_CREATE", "30/minute", "Limit on `POST /v1/games`."),
    EnvVar("RATE_LIMIT_JOIN", "60/minute", "Limit on `POST /v1/games/{id}/players`."),
    EnvVar("RATE_LIMIT_MOVES", "600/minute", "Limit on `POST /v1/games/{id}/moves`."),
    EnvVar("RATE_LIMIT_EVALUATE", "60/minute", "Limit on `POST /v1/hands/evaluate`."),
    EnvVar("RATE_LIMIT_LIST", "120/minute", "Limit on `GET /v1/games` (the lobby's listing)."),
    EnvVar("RATE_LIMIT_QUICK_JOIN", "30/minute", "Limit on `POST /v1/lobby/quick-join`."),
    EnvVar("RATE_LIMIT_REPLAY", "60/minute", "Limit on `GET /v1/games/{id}/replay`."),
    EnvVar(
        "RATE_LIMIT_SEAT_CHANGES",
        "30/minute",
        "Limit per token on `POST` and `DELETE /v1/games/{id}/autopilot` and "
        "`POST /v1/games/{id}/resign`.",
    ),
    EnvVar(
        "RATE_LIMIT_STREAM_TICKETS",
        "30/minute",
        "Limit per token on `POST /v1/games/{id}/stream-tickets` (a ticket opens its "
        "seat's stream as often as asked: one is enough).",
    ),
    EnvVar(
        "RATE_LIMIT_PLAYER_TOKENS",
        "600/minute",
        "Limit per app key on `POST /v1/players/{player_id}/tokens` (apps mode).",
    ),
    EnvVar(
        "STREAM_LIMIT_PER_ADDRESS",
        "100",
        "Event streams (SSE, NDJSON) and waiting long polls of `GET /v1/games/{id}/events` "
        "one client address may hold open at once, counted across every worker and instance "
        "(429 `TOO_MANY_STREAMS` beyond); 0: no cap. Many players behind one carrier-grade "
        "NAT or corporate proxy share an address: raise it where they do. Off with "
        "`RATE_LIMITS=false`.",
    ),
    EnvVar(
        "STREAM_LIMIT_PER_SEAT",
        "8",
        "Event streams and waiting long polls one seat may hold open at once, whether opened "
        "with its token or its stream tickets (a player's app on a few devices); 0: no cap. "
        "Off with `RATE_LIMITS=false`.",
    ),
    EnvVar(
        "LOBBY_WAITING_SECONDS",
        "3600",
        "A listed game still waiting for players this long after its creation leaves the "
        "lobby (listing and quick-join); it can still be joined by its id.",
    ),
    EnvVar(
        "LOBBY_TURN_SECONDS",
        "60",
        "The turn timer of a listed or quick-join table created without one (a stranger's "
        "table always has one: a seat whose player does not play cannot stall it). Unlisted "
        "games have no timer unless asked for.",
    ),
    EnvVar(
        "LOBBY_TURN_MAX_SECONDS",
        "600",
        "The longest turn timer a listed or quick-join table may ask for (422 beyond); at "
        "least `LOBBY_TURN_SECONDS`.",
    ),
    EnvVar(
        "LOBBY_AUTOPILOT_AFTER",
        "2",
        "A listed or quick-join table hands a seat to the autopilot after this many automatic "
        "turns in a row (its default, and the most it may ask for).",
    ),
    EnvVar(
        "LOBBY_SEATS_PER_ADDRESS",
        "4",
        "Seats one client address may hold at once in listed and quick-join games that are "
        "waiting or in play (429 beyond); 0: no cap.",
    ),
    EnvVar(
        "LOBBY_LISTED_PER_ADDRESS",
        "2",
        "Listed games one client address may have waiting for players at once (429 beyond); "
        "0: no cap.",
    ),
    EnvVar(
        "LOBBY_LIVE_SECONDS",
        "60",
        "A waiting table counts as live in the lobby (listed first, offered first by "
        "quick-join) while one of its seated players made a request with its token within "
        "this long (its view, its events, an open stream).",
    ),
    EnvVar(
        "QUICKJOIN_SKILL_BASE",
        "3.0",
        "`AUTH_MODE=apps`: a player's quick-join takes a seat at a waiting table whose "
        "players' mean skill (rating `mu`) is within this much of the player's own when the "
        "table was just listed, unless the operator sets the app's own "
        "(`three-thirteen-admin apps matchmaking`).",
    ),
    EnvVar(
        "QUICKJOIN_SKILL_WIDEN_PER_SECOND",
        "0.2",
        "`AUTH_MODE=apps`: how much a table's skill window widens for each second it has "
        "waited (0: never), unless the operator sets the app's own.",
    ),
    EnvVar(
        "QUICKJOIN_SKILL_MAX",
        "25.0",
        "`AUTH_MODE=apps`: the widest a table's skill window gets, however long it waited, "
        "unless the operator sets the app's own.",
    ),
    EnvVar(
        "QUICKJOIN_BOT_FILL_SECONDS",
        "0",
        "`AUTH_MODE=apps`: a table a player's quick-join listed that still has open seats "
        "this long after it was listed is filled with bots of its players' skill and starts "
        "(0: never), unless the operator sets the app's own.",
    ),
    EnvVar(
        "LEADERBOARD_SHARDS",
        "16",
        "Each leaderboard (per app, ruleset and table size) is split into this many sorted "
        "sets, each in a hash slot of its own spread evenly over the slots, so that no key "
        "is hot on a Redis Cluster; a read asks every shard (one pipelined round trip per "
        "node). A player's shard is a hash of its id: changing this moves players to other "
        "shards, so a deployment keeps it (the boards must be posted again after a change).",
    ),
    EnvVar(
        "LEADERBOARD_MIN_GAMES",
        "5",
        "A player appears on a leaderboard once it has played at least this many rated "
        "games of the board's ruleset and table size (0: from its first). Applied when a "
        "player's rating is posted.",
    ),
    EnvVar(
        "RATE_LIMIT_AUTH_FAILURES",
        "30/minute",
        "Limit on 401 answers per client address (429 beyond).",
    ),
    EnvVar(
        "AUTH_MODE",
        "open",
        "`open`: anyone may create and join games, and a seat's bearer token acts for it "
        "(development, trusted networks). `apps`: every game belongs to an app made with "
        "`three-thirteen-admin apps create`, and every request is made by an app's backend "
        "(its secret key), one of its players (a player token) or a seat of one of its games; "
        "see docs/AUTH.md. Needs `REDIS_URL`.",
    ),
    EnvVar(
        "APP_CREATES_PER_MINUTE",
        "600",
        "`AUTH_MODE=apps`: games an app (its backend and its players together) may create a "
        "minute, unless the operator sets its own (`three-thirteen-admin apps limits`). "
        "0: no limit.",
    ),
    EnvVar(
        "APP_CONCURRENT_GAMES",
        "10000",
        "`AUTH_MODE=apps`: games of an app not yet finished or cancelled at once, unless "
        "the operator sets its own. 0: no limit.",
    ),
    EnvVar(
        "APP_MOVES_PER_MINUTE",
        "60000",
        "`AUTH_MODE=apps`: moves an app's players and backend together may send a minute, "
        "unless the operator sets its own. 0: no limit.",
    ),
    EnvVar(
        "APP_LISTINGS_PER_MINUTE",
        "6000",
        "`AUTH_MODE=apps`: lobby listings (`GET /v1/games`) an app and its players may ask "
        "for a minute, and the app's listings of its games (`GET /v1/app/games`), unless "
        "the operator sets its own. 0: no limit.",
    ),
    EnvVar(
        "APP_PLAYER_MOVES_PER_MINUTE",
        "600",
        "`AUTH_MODE=apps`: moves each player of an app may send a minute (all its devices "
        "together; `RATE_LIMIT_MOVES` counts seat tokens), unless the operator sets the "
        "app's own. 0: no limit.",
    ),
    EnvVar(
        "JWKS_CACHE_SECONDS",
        "300",
        "`AUTH_MODE=apps`: how long an instance uses the keys it fetched from an app's JWKS "
        "URL before fetching them again (docs/AUTH.md).",
    ),
    EnvVar(
        "JWKS_REFETCH_SECONDS",
        "30",
        "`AUTH_MODE=apps`: an app's JWKS is fetched at most once in this long by an instance, "
        "even for a JWT naming a `kid` it does not have (a key the app just published).",
    ),
    EnvVar(
        "JWKS_TIMEOUT_SECONDS",
        "3",
        "`AUTH_MODE=apps`: how long fetching an app's JWKS may take; on a failure the keys "
        "fetched before stay in use.",
    ),
    EnvVar(
        "FAST_LANE",
        "true",
        "Answer views and moves straight from WSGI, skipping Flask's request machinery "
        "(same handlers, same answers).",
    ),
    EnvVar(
        "SOLVER",
        "c",
        "The hand solver: `c` (its C extension, where the install built it; else the "
        "Python) or `python` (the Python alone). The same answers either way.",
    ),
    EnvVar(
        "BOT_CACHE_MB",
        "64",
        "Megabytes (MiB) a process that plays bots may spend on the bots' and the hand "
        "solver's memos, all together (least recently used entries, or the bots' search memo "
        "as a whole, are dropped past it). Smaller costs decision time: see "
        "docs/PERFORMANCE.md.",
    ),
    EnvVar(
        "BOT_EXPERT_SAMPLES",
        "32",
        "The `expert` bot's budget per decision: how many samples of the hidden cards it "
        "plays each candidate move out on (1 to 1000). A count, not a time, so that a move "
        "depends on the game's seed alone, never on the machine's speed or load. The "
        "default: a median decision of about 30 ms of CPU, p99 0.15 s "
        "(docs/PERFORMANCE.md). Give every process that plays bots the same value, so that "
        "a game's bots play the same whichever process plays them.",
    ),
    EnvVar(
        "TRUSTED_PROXY_HOPS",
        "0",
        "Proxies in front of the service that append the client's address to "
        "`X-Forwarded-For` (the shipped nginx is one): that many entries, counted from the "
        "right, are trusted, and the leftmost of them is the client's address (rate limits, "
        "logs). 0: the header is ignored and the client is the TCP peer. Set exactly the "
        "number of proxies: one more lets a client choose its own address.",
    ),
    EnvVar("CORS_ORIGINS", "", "Comma-separated allowed origins (`*` for any); empty: CORS off."),
    EnvVar(
        "WEBHOOK_ALLOW_HTTP",
        "false",
        "Accept `http://` webhook URLs (development); otherwise only `https://`.",
    ),
    EnvVar(
        "WEBHOOK_ALLOW_LOOPBACK",
        "false",
        "Let webhooks reach loopback addresses (127.0.0.0/8, ::1: tests, development). "
        "Private, link-local and metadata addresses stay refused.",
    ),
    EnvVar(
        "WEBHOOK_RETRY_SECONDS",
        "86400",
        "How long a delivery is retried (exponential backoff with jitter) after the write "
        "that made it, before it is recorded as failed.",
    ),
    EnvVar(
        "WEBHOOK_TIMEOUT_SECONDS",
        "10",
        "Most one attempt of a delivery takes in all -- connecting, sending and reading the "
        "answer, however slowly the receiver trickles it -- before it is cut off as a failed "
        "attempt.",
    ),
    EnvVar("WEBHOOK_CONCURRENCY", "16", "Deliveries a delivery worker makes at once (threads)."),
    EnvVar(
        "WEBHOOK_HOST_CONCURRENCY",
        "4",
        "Attempts a delivery worker makes at once to one receiver (the URL's host and port); "
        "the games of a receiver at its cap wait their turn without holding a thread, so a "
        "slow receiver cannot take every one of `WEBHOOK_CONCURRENCY`.",
    ),
    EnvVar(
        "WEBHOOK_SWEEP_SECONDS",
        "10",
        "How often a delivery worker looks through every hash slot's outbox for work it was "
        "not told about (a crashed worker's deliveries, retries another worker scheduled).",
    ),
    EnvVar(
        "WEBHOOK_CLAIM_SECONDS",
        "60",
        "A delivery taken by a worker and not settled after this long (the worker died) is "
        "taken over by another. At least twice `WEBHOOK_TIMEOUT_SECONDS`: a worker renews its "
        "claim just before each attempt, so an attempt in flight is never taken over.",
    ),
    EnvVar(
        "BOT_CONCURRENCY",
        "4",
        "Games a bot worker (`three-thirteen-bots`) plays at once (threads). Bots are CPU "
        "work under one interpreter lock: threads overlap only the Redis round trips, so "
        "more bot CPU means more worker processes, not more threads.",
    ),
    EnvVar(
        "BOT_SWEEP_SECONDS",
        "5",
        "How often a bot worker looks through every hash slot's due games (pipelined, 1024 "
        "slots a round trip, about 0.2 s of its CPU) for what it was not told about: the "
        "due times published while it was not listening. Each write publishes its game's "
        "due time, which the workers wait for with timers, so turns are played on time "
        "between sweeps; a dead worker's claims are taken over when their lease ends.",
    ),
    EnvVar(
        "BOT_CLAIM_SECONDS",
        "30",
        "A due game claimed by a bot worker and not written after this long (the worker "
        "died) is due again and taken over by another.  Well above one stretch of bot "
        "moves (32 moves at most, under a second).",
    ),
    EnvVar(
        "BOT_IDLE_MOVE_SECONDS",
        "0.25",
        "Pace of a game whose seats are all played by bots (bots, autopilot, resigned "
        "players): after each stretch, its next one is due this many seconds per move "
        "later, so such a game grows its event log slowly and takes little of a worker.  "
        "0: at once.",
    ),
    EnvVar(
        "WORKER_METRICS_PORT",
        "0",
        "Port on which a bot worker process (`three-thirteen-bots`) serves its own "
        "Prometheus metrics (`/metrics`, on `HOST`): claims, moves, games finished, how "
        "late it takes due turns. 0: none. The server's `/metrics` counts requests only.",
    ),
    EnvVar("HOST", "127.0.0.1", "Address gunicorn binds to."),
    EnvVar("PORT", "8000", "Port gunicorn binds to."),
    EnvVar(
        "WEB_CONCURRENCY",
        "",
        "Gunicorn worker processes (default: 2 x CPU cores, at most 4; forced to 1 without "
        "`REDIS_URL`).",
    ),
    EnvVar(
        "GUNICORN_WORKER_CONNECTIONS",
        "5000",
        "Connections a worker serves at once (gevent: each one, waiting long polls and slow "
        "clients included, is a greenlet, not a thread).",
    ),
    EnvVar(
        "BODY_TIMEOUT_SECONDS",
        "10",
        "Seconds a client has to send a request body once its headers are in (408 beyond). "
        "Headers must arrive within 5 s (the keep-alive time), else the connection is closed.",
    ),
    EnvVar("GUNICORN_TIMEOUT", "60", "Seconds before a silent worker is restarted."),
)


def env_table_markdown() -> str:
    """The table of environment variables in ``docs/CONFIGURATION.md``, from :data:`ENV_VARS`."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for var in ENV_VARS:
        default = f"`{var.default}`" if var.default else "(unset)"
        lines.append(f"| `{var.name}` | {default} | {var.description} |")
    return "\n".join(lines)
