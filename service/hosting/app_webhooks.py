"""An app's webhook: where the lifecycle of every game of the app is told.

The operator sets it (``three-thirteen-admin apps webhook <app id> --url ...``): a URL,
the events it wants (every one by default), whether a ``turn`` is told only when the
player holds no live stream of the game, and a signing secret made here and shown
once.  It is kept in the app's record (:attr:`~service.hosting.apps.App.webhook`);
each write of a game of the app reads it (through an :class:`AppDirectory`, so at
most every half second per process) and queues its deliveries in the same atomic
script as the game's own webhook's (:mod:`service.hosting.app_deliveries`), sent by
the same workers, signed the same way.  Its attempts are logged per app
(:mod:`service.store.app_hook_log`), where a delivery may be sent again.

>>> hook = AppWebhook("https://example.com/t13", ("turn",), new_secret(), False)
>>> AppWebhook.from_dict(hook.to_dict()) == hook
True
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from service.hosting.apps import App, AppDirectory, AppError, load
from service.hosting.game_webhooks import check_url, new_secret
from service.hosting.refusals import HostingError
from service.hosting.tokens import app_of_game
from service.store.app_hook_log import AppHookLog
from service.store.app_registry import AppRegistry


class AppEvent(StrEnum):
    """What an app's webhook can be told, for every game of the app (the names of
    the game's own events)."""

    GAME_CREATED = "game_created"
    """A game was made (create, quick-join, rematch): ``seats``, ``players``."""
    PLAYER_JOINED = "player_joined"
    """A seat was taken: ``seat``, ``name``, ``bot``, ``player_id``."""
    GAME_STARTED = "game_started"
    """Every seat is taken; round 1 is dealt: ``seats``, ``players``."""
    TURN = "turn"
    """A human seat is to play: ``seat``, ``name``, ``round``, ``deadline``, ``player_id``."""
    PLAYER_LEFT = "player_left"
    """A player left a game before its start: ``seat``, ``name``, ``player_id``."""
    PLAYER_RESIGNED = "player_resigned"
    """A player resigned a game in play: ``seat``, ``name``, ``player_id``."""
    GAME_FINISHED = "game_finished"
    """The last round was scored: ``winners``, ``totals``, ``players``."""
    GAME_CANCELLED = "game_cancelled"
    """Its last player left before the start: ``reason``, ``players``."""
    GAME_ABORTED = "game_aborted"
    """The app or the operator ended it: ``reason``, ``players``."""


EVENT_NAMES = tuple(event.value for event in AppEvent)


@dataclass(frozen=True, slots=True)
class AppWebhook:
    url: str
    events: tuple[str, ...]
    secret: str
    turn_only_offline: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "events": list(self.events),
            "secret": self.secret,
            "turn_only_offline": self.turn_only_offline,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AppWebhook:
        return cls(
            data["url"], tuple(data["events"]), data["secret"], bool(data["turn_only_offline"])
        )

    def shown(self) -> dict[str, Any]:
        """What listings show: no secret."""
        return {"url": self.url, "events": list(self.events), "turn_only": self.turn_only}

    @property
    def turn_only(self) -> str:
        return "offline" if self.turn_only_offline else "always"


class AppWebhookNotFoundError(HostingError):
    """The app has no webhook (answered 404)."""

    code = "WEBHOOK_NOT_FOUND"


class DeliveryNotFoundError(HostingError):
    """No delivery of that id in the app's log (answered 404)."""

    code = "DELIVERY_NOT_FOUND"


def set_webhook(
    registry: AppRegistry,
    app_id: str,
    url: str,
    events: Sequence[str],
    turn_only_offline: bool,
    *,
    allow_http: bool,
    allow_loopback: bool,
) -> tuple[App, AppWebhook]:
    """Tell ``app_id``'s games' lifecycle to ``url`` from now on (``events``: every one
    when empty), signed with a new secret (returned: shown once).  Refuses a URL no
    delivery may reach (:func:`~service.hosting.game_webhooks.check_url`) and unknown
    events (:class:`AppError`)."""
    unknown = sorted(set(events) - set(EVENT_NAMES))
    if unknown:
        raise AppError(f"unknown events {', '.join(unknown)}; known: {', '.join(EVENT_NAMES)}")
    try:
        check_url(url, allow_http=allow_http, allow_loopback=allow_loopback)
    except HostingError as exc:
        raise AppError(f"webhook URL refused: {exc}") from None
    app = load(registry, app_id)
    if app.revoked is not None:
        raise AppError(f"app {app_id} is revoked")
    wanted = tuple(e for e in EVENT_NAMES if not events or e in events)
    hook = AppWebhook(url, wanted, new_secret(), turn_only_offline)
    app.webhook = hook.to_dict()
    registry.save_app(app.id, app.to_bytes())
    return app, hook


def remove_webhook(registry: AppRegistry, app_id: str) -> App:
    """Tell ``app_id``'s games' lifecycle nowhere from now on (deliveries queued
    before are still made)."""
    app = load(registry, app_id)
    if app.webhook is None:
        raise AppError(f"app {app_id} has no webhook")
    app.webhook = None
    registry.save_app(app.id, app.to_bytes())
    return app


def webhook_of(app: App) -> AppWebhook | None:
    return None if app.webhook is None else AppWebhook.from_dict(app.webhook)


_directories: weakref.WeakKeyDictionary[AppRegistry, AppDirectory] = weakref.WeakKeyDictionary()
_directories_lock = threading.Lock()


def _directory(registry: AppRegistry) -> AppDirectory:
    """The process's cache of the app records of ``registry`` (one per store)."""
    with _directories_lock:
        found = _directories.get(registry)
        if found is None:
            found = _directories[registry] = AppDirectory(registry)
        return found


def hook_for_game(registry: AppRegistry, game_id: str) -> tuple[str, AppWebhook] | None:
    """The app of ``game_id`` and its webhook, if it is a live app's game and the app
    has one: read by every write of the game (a cached record: no read for a game of
    no app, at most one a half second per app and process)."""
    app_id = app_of_game(game_id)
    if app_id is None:
        return None
    app = _directory(registry).live(app_id)
    hook = None if app is None else webhook_of(app)
    return None if hook is None else (app_id, hook)


def delivery_log(log: AppHookLog, app: App) -> dict[str, Any]:
    """The app's webhook (no secret) and its last delivery attempts, oldest first."""
    hook = webhook_of(app)
    return {
        "webhook": None if hook is None else hook.shown(),
        "attempts": [{k: v for k, v in line.items() if k != "body"} for line in log.read(app.id)],
    }


def redeliver(log: AppHookLog, app: App, delivery_id: str) -> str:
    """Queue delivery ``delivery_id`` (one of the app's log) again, to the app's
    webhook as it is now, with the same id and body: retried as a new delivery would
    be.  Returns the game it is of."""
    hook = webhook_of(app)
    if hook is None:
        raise AppWebhookNotFoundError("the app has no webhook (three-thirteen-admin apps webhook)")
    for line in reversed(log.read(app.id)):
        if line["delivery_id"] == delivery_id:
            game_id = str(line["game_id"])
            header = {
                "g": game_id,
                "u": hook.url,
                "k": hook.secret,
                "t": int(time.time() * 1000),
                "a": app.id,
            }
            log.requeue(game_id, orjson.dumps(header), line["body"].encode())
            return game_id
    raise DeliveryNotFoundError(f"no delivery {delivery_id!r} among the app's last attempts")
