"""Games in Redis: a versioned document plus an event stream per game.

The store moves bytes and knows no game rules.  The caller serializes the game
document and every event as JSON (orjson; the document carries its format
number, see :mod:`service.hosting.document`) — never pickle, so a stored game
never executes code when loaded.

Layout (see :mod:`service.store.keys`; all keys of a game share one hash tag):

* ``t13:{id}:state`` hash — ``v`` version, ``d`` document, ``r`` the results of
  finished rounds (kept apart: the document changes on every move, they once a
  round; writes leave them alone when not given), ``p`` the public view
  without those results, ``q`` every seated player's part of their view
  (private: read only for the holder of its token, see
  :func:`service.hosting.document.seat_part_for`), ``t`` turn deadline, ``s`` last
  event seq, ``n`` last write id;
* ``t13:{id}:events`` stream — entry id ``<seq>-0``, fields ``seat`` ("" public,
  "N" private to seat N) and ``e`` (the event JSON);
* ``t13:{id}:idem`` hash — ``<hash>:f`` request fingerprint and ``<hash>:r``
  response of each idempotency key, and ``t13:{id}:idem-order`` list — their
  hashes, oldest first: a game keeps its last :data:`IDEMPOTENCY_RECORDS_PER_GAME`,
  for ``idempotency_ttl_seconds`` after its last keyed write (and the record of
  the keyed request that created it, which none of them pushes out);
* ``t13:{id}:replay`` string -- a finished game's replay, built once (it never
  changes), versioned JSON, expiring with the state key (:meth:`GameStore.save_replay`);
* the game's entry in its slot's set of due games (``t13:{<slot tag>}:due``, see
  :mod:`service.store.due_games`), set from the turn deadline by every write;
* once finished, its entry in its slot's finished games (``t13:{<slot tag>}:finished``),
  added by the write that finishes it, until it is archived (:mod:`service.store.archives`).

Every write is one Lua script (EVALSHA via ``register_script``) that touches only
its game's keys, passed in KEYS, so it works on Redis Cluster too.  Each write
refreshes the game's TTL.

With ``REDIS_WAIT_REPLICAS`` or ``REDIS_WAIT_AOF`` set, every write a client is
told about is confirmed before it is acknowledged (:mod:`service.store.durability`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from redis.commands.core import Script

from service.config import Config
from service.store import budget, keys
from service.store.app_hook_log import AppHookLog
from service.store.app_registry import AppRegistry
from service.store.archives import Archives
from service.store.durability import Command, Durability, check_support, send_durably
from service.store.failures import translate_errors
from service.store.game_reads import REPLAY_HEAD, GameReads, Written, last_event
from service.store.history import Chain, link, new_chain
from service.store.holds import AddressHolds
from service.store.leaderboards import Leaderboards
from service.store.live_games import AppLiveGames
from service.store.lobby_index import LobbyIndex
from service.store.ratings import PlayerRatings
from service.store.redis_client import RedisClient, connect, is_cluster, subscribers
from service.store.script_args import (
    Deliveries,
    IdempotencyRecord,
    StoredEvent,
    deadline_arg,
    script_input,
)
from service.store.scripts import (
    COMMIT_SCRIPT,
    CREATE_SCRIPT,
    EMBEDDED_COMMIT_SCRIPT,
    EMBEDDED_CREATE_SCRIPT,
    SAVE_REPLAY_SCRIPT,
)
from service.store.shutdown import stop_on_shutdown
from service.store.store_errors import (
    GameExists,
    GameNotFound,
    IdempotentReplay,
    VersionConflict,
)
from service.store.stream_leases import LEASE_SCRIPT, StreamLeases
from service.store.tickets import TicketStore
from service.store.wakeups import Wakeups, Watch

PING_TIMEOUT_SECONDS = 0.5
"""What :meth:`GameStore.ping` waits at most: under a readiness probe's usual 1 s."""

IDEMPOTENCY_RECORDS_PER_GAME = 64
"""The most idempotency records a game keeps (about 2 KB each: a move's answer); a
newer keyed write drops the oldest.  A retry is of one of the last few requests, so
a client that keys every move still finds its own, while the game's storage stays
bounded however many keys it is sent."""


class GameStore(GameReads, TicketStore):
    """All of the service's Redis access: create, load and commit games, read events.

    Thread-safe; share one instance per process.  Every method raises
    :class:`~service.store.store_errors.StoreUnavailable` when Redis cannot serve it.
    """

    def __init__(
        self,
        client: RedisClient | None = None,
        *,
        config: Config | None = None,
        game_ttl_seconds: int | None = None,
        idempotency_ttl_seconds: int | None = None,
    ) -> None:
        """Use ``client``, or connect lazily (on first use) from ``config``.

        TTLs default to those of ``config`` (or :class:`Config`'s defaults).
        """
        cfg = config or Config()
        if client is None and config is None:
            raise ValueError("GameStore needs a client or a config")
        self._config = cfg
        self.game_ttl_seconds = game_ttl_seconds or cfg.game_ttl_seconds
        self.idempotency_ttl_seconds = idempotency_ttl_seconds or cfg.idempotency_ttl_seconds
        self._durability = Durability.from_config(cfg)
        self._lock = threading.Lock()
        self._client: RedisClient | None = None
        self._wakeups: Wakeups
        self._create: Script
        self._commit: Script
        self._save_replay: Script
        self._streams: StreamLeases
        self.lobby = LobbyIndex(lambda: self.client)
        """The lobby's index of listed games (:mod:`service.store.lobby_index`)."""
        self.holds = AddressHolds(lambda: self.client)
        """What each client address holds in the lobby (:mod:`service.store.holds`)."""
        self.apps = AppRegistry(lambda: self.client)
        """Apps and their players (:mod:`service.store.app_registry`)."""
        self.live_games = AppLiveGames(lambda: self.client)
        """The live games of each app (:mod:`service.store.live_games`)."""
        self.archives = Archives(lambda: self.client)
        """Finished games' archives and players' histories (:mod:`service.store.archives`)."""
        self.ratings = PlayerRatings(lambda: self.client, self._durability)
        """Players' ratings (:mod:`service.store.ratings`)."""
        self.leaderboards = Leaderboards(lambda: self.client, cfg.leaderboard_shards)
        """The leaderboards, sharded (:mod:`service.store.leaderboards`)."""
        self.app_hooks = AppHookLog(lambda: self.client, self.game_ttl_seconds)
        """The delivery logs of apps' webhooks (:mod:`service.store.app_hook_log`)."""
        if client is not None:
            self._bind(client)

    @classmethod
    def from_config(cls, config: Config) -> GameStore:
        """A store for ``config``; a cluster is contacted on first use, not here."""
        return cls(config=config)

    def _bind(self, client: RedisClient) -> None:
        embedded = type(client).__module__.startswith("fakeredis")
        self._create = client.register_script(EMBEDDED_CREATE_SCRIPT if embedded else CREATE_SCRIPT)
        self._save_replay = client.register_script(SAVE_REPLAY_SCRIPT)
        self._commit = client.register_script(EMBEDDED_COMMIT_SCRIPT if embedded else COMMIT_SCRIPT)
        self._streams = StreamLeases(
            client.register_script(LEASE_SCRIPT), self._fetch, together=not is_cluster(client)
        )
        self._wakeups = Wakeups(subscribers(client))
        stop_on_shutdown(self._wakeups)
        self._client = client

    def _fetch(self, *commands: tuple[Any, ...]) -> list[Any]:
        """Replies to ``commands`` sent in one round trip: reads, or writes that
        may be sent twice (a round trip is retried on a new connection)."""
        client = self.client
        if len(commands) == 1:
            return [client.execute_command(*commands[0])]
        pipe = client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command)
        return list(pipe.execute())

    def _ensure_connected(self) -> RedisClient:
        if self._client is None:
            with self._lock, translate_errors():
                if self._client is None:
                    self._bind(connect(self._config))
        return self._client

    @property
    def client(self) -> RedisClient:
        """The underlying client (connecting now if needed); for tests and health checks."""
        return self._ensure_connected()

    @property
    def streams(self) -> StreamLeases:
        """The leases of open event streams (:mod:`service.store.stream_leases`)."""
        self._ensure_connected()
        return self._streams

    def ping(self, timeout: float = PING_TIMEOUT_SECONDS) -> bool:
        """True if Redis answers within ``timeout`` (or the request's budget, if
        shorter); never raises (for readiness probes)."""
        token = budget.open_budget(timeout)
        try:
            with translate_errors():
                return bool(self.client.ping())
        except Exception:
            return False
        finally:
            budget.close_budget(token)

    def check_durability(self) -> list[str]:
        """Raise :class:`~service.store.store_errors.StoreMisconfigured` if Redis cannot
        confirm writes as ``REDIS_WAIT_REPLICAS`` / ``REDIS_WAIT_AOF`` ask (``WAITAOF``
        needs Redis 7.2 and ``appendonly yes``), or
        :class:`~service.store.store_errors.StoreUnavailable` if it cannot be asked now;
        the warnings worth logging (too few replicas connected now)."""
        if not self._durability.on:
            return []
        with translate_errors():
            return check_support(self.client, self._durability)

    def _durably(
        self, game_id: str, command: Command | None = None, script: Script | None = None
    ) -> tuple[Any, list[Any]]:
        """:func:`~service.store.durability.send_durably` on this store's connections."""
        with translate_errors():
            return send_durably(self.client, self._durability, game_id, command, script)

    def _write(
        self, script: Script, game_id: str, key_list: list[Any], args: list[Any]
    ) -> tuple[Any, list[Any] | None]:
        """``script``'s reply (with durability on, sent by :meth:`_durably`), and
        the confirmation's replies (None when off)."""
        if not self._durability.on:
            with translate_errors():
                return script(keys=key_list, args=args), None
        command = ("EVALSHA", script.sha, len(key_list), *key_list, *args)
        return self._durably(game_id, command, script)

    def _confirm_written(self, game_id: str) -> None:
        """Wait until the writes made so far are confirmed, if durability is on."""
        if self._durability.on:
            self._confirm(self._durably(game_id)[1])

    def _confirmed(self, game_id: str, command: Command) -> bool:
        """Send ``command`` and wait for its confirmation, if durability is on
        (:class:`~service.store.store_errors.NotDurable` when not confirmed);
        False, sending nothing, when it is off."""
        if not self._durability.on:
            return False
        self._confirm(self._durably(game_id, command)[1])
        return True

    def _confirm(self, confirmation: list[Any] | None) -> None:
        """Raise :class:`~service.store.store_errors.NotDurable` unless ``confirmation``
        confirms the write (None: durability is off)."""
        if confirmation is not None:
            self._durability.check(confirmation)

    def create(
        self,
        game_id: str,
        doc: bytes,
        events: Sequence[StoredEvent] = (),
        *,
        idempotency: IdempotencyRecord | None = None,
        public: bytes = b"",
        deadline: float | None = None,
        results: bytes | None = None,
        seat_parts: bytes = b"",
        deliveries: Deliveries | None = None,
    ) -> Written:
        """Store a new game at version 1 with its first events; returns 1 (a
        :class:`~service.store.game_reads.Written`: with the last event).

        ``public`` (the public view, ready to send) and ``deadline`` (of the
        current turn) are kept beside the document so that reads which need
        only them skip the document (see :meth:`load_public`); so are
        ``results`` (see :meth:`load_game`; None stores none) and
        ``seat_parts``, the seats' parts of their views (see
        :meth:`load_seat_view`; empty: none).  With ``idempotency``, its record
        is saved with the game, as :meth:`commit` saves one (kept while the
        game's records are, but never after the game would expire).  Webhook
        ``deliveries`` are queued as :meth:`commit` queues them.

        Raises :class:`GameExists` if the id is taken, or
        :class:`IdempotentReplay` if it was taken by a request with the same
        idempotency key (then nothing was written; compare fingerprints and replay).
        """
        chain = new_chain()
        digests, head = link(chain, events)
        key_list, args = script_input(
            game_id,
            [doc, self.game_ttl_seconds, public, deadline_arg(deadline)],
            [results or b"", seat_parts, chain.key, head],
            events,
            digests,
            idempotency,
            min(self.idempotency_ttl_seconds, self.game_ttl_seconds),
            deliveries=deliveries,
        )
        self._ensure_connected()
        result, confirmation = self._write(self._create, game_id, key_list, args)
        status = int(result[0])
        if status != -1:  # made (by this request, or by the first with its key)
            self._confirm(confirmation)
        if status == -2:
            raise IdempotentReplay(result[1], result[2], result[3])
        if status < 0:
            raise GameExists(game_id)
        return Written(1, last_event(result[1], result[2]))

    def commit(
        self,
        game_id: str,
        expected_version: int,
        doc: bytes,
        events: Sequence[StoredEvent] = (),
        *,
        idempotency: IdempotencyRecord | None = None,
        public: bytes = b"",
        deadline: float | None = None,
        results: bytes | None = None,
        seat_parts: bytes = b"",
        deliveries: Deliveries | None = None,
        chain: Chain | None = None,
        finished_ms: int | None = None,
    ) -> Written:
        """Replace the document if the game is still at ``expected_version``; append events.

        ``results`` replaces the results stored apart (None leaves them as they
        are); ``seat_parts`` replaces the seats' parts of
        their views (empty: none, and a view then reads the document).

        Atomic: the version check, the new document, the events (numbered on
        from the game's last seq), the TTL refresh and, with ``idempotency =
        (key_hash, fingerprint, response)``, the idempotency record and the
        webhook ``deliveries`` (queued in the outbox of the game's hash slot, see
        :mod:`service.store.outbox`) all happen in one script or not at all.
        The response is stored for ``idempotency_ttl_seconds`` and must be what
        the caller will answer; since the new version is ``expected_version + 1``
        it can be built before calling.  Returns the new version (a
        :class:`~service.store.game_reads.Written`: with the game's last event).

        Raises :class:`VersionConflict` (with the current version),
        :class:`GameNotFound`, or :class:`IdempotentReplay` if the key was used
        already (then nothing was written; compare fingerprints and replay).

        ``chain`` is the one :meth:`load_game` read at ``expected_version``
        (:attr:`LoadedGame.chain`); without it, it is read first (a round trip
        more).  The events are tagged from it (:mod:`service.store.history`).

        ``finished_ms`` (when this write finishes the game, Unix ms) queues the game
        in its slot's finished games, in the same script (:mod:`service.store.archives`).

        A commit whose reply is lost (timeout) is re-sent by the client
        library; the script recognises its own write (by a write id saved with
        the game) and reports success, so it is never applied twice nor
        reported as a conflict.
        """
        if chain is None:
            chain = self.chain_at(game_id, expected_version)
        digests, head = link(chain, events)
        key_list, args = script_input(
            game_id,
            [int(expected_version), doc, self.game_ttl_seconds, public, deadline_arg(deadline)],
            [results or b"", seat_parts, head],
            events,
            digests,
            idempotency,
            self.idempotency_ttl_seconds,
            IDEMPOTENCY_RECORDS_PER_GAME,
            deliveries=deliveries,
            finished_ms=finished_ms,
        )
        self._ensure_connected()
        result, confirmation = self._write(self._commit, game_id, key_list, args)
        status = int(result[0])
        if status in (1, -2):  # made (by this request, or by the first with its key)
            self._confirm(confirmation)
        if status == 1:
            return Written(int(result[1]), last_event(result[2], result[3]))
        if status == 0:
            raise VersionConflict(int(result[1]))
        if status == -2:
            raise IdempotentReplay(result[2], result[3], result[4])
        raise GameNotFound(game_id)

    def watch(self, game_id: str) -> Watch:
        """A watch woken by each commit of ``game_id`` until it is closed (or its
        ``with`` block ends); make it before reading the events, see
        :mod:`service.store.wakeups`."""
        self._ensure_connected()
        return self._wakeups.watch(game_id)

    def save_replay(self, game_id: str, replay: bytes) -> None:
        """Keep ``replay`` (the JSON text of a finished game's replay, which never
        changes) for as long as the game: versioned, ``{"f":1,"r":<replay>}``."""
        self._ensure_connected()
        state, saved = keys.key(game_id, keys.STATE), keys.key(game_id, keys.REPLAY)
        with translate_errors():
            self._save_replay(keys=[state, saved], args=[REPLAY_HEAD + replay + b"}"])

    def waiting(self) -> int:
        """How many waiters of this process are watching a game now."""
        return 0 if self._client is None else self._wakeups.waiting()
