"""The delivery worker: finds queued deliveries, sends them, settles every attempt.

How it finds work across the outboxes of up to 16384 hash slots
(:mod:`service.store.outbox`):

* **Hints.** A write that queues deliveries publishes its slot on
  :data:`~service.store.keys.OUTBOX_HINT` in the same script; the worker's listener
  marks that slot ready.  A hint is only a wake-up: losing one delays, never loses,
  a delivery.
* **Sweeps.** Every ``WEBHOOK_SWEEP_SECONDS`` (and whenever the listener
  (re)subscribes) a thread of the worker looks at every slot's outbox in pipelined
  round trips (the main loop goes on meanwhile),
  moves due retries into the stream, takes over deliveries another worker left
  pending past ``WEBHOOK_CLAIM_SECONDS``, and learns when the next retries are due.
* **Timers.** A failed attempt's retry is due at a time the worker knows: it looks
  at that slot again then.

Deliveries of one slot are read in batches by the main thread; each game's
deliveries of a batch are sent in order by one thread of a pool of
``WEBHOOK_CONCURRENCY``, games in parallel.  A slot is read again only once its
batch is settled, so a game's deliveries go out in order while they succeed.

Slow receivers:

* **A deadline per attempt.** Each attempt ends within ``WEBHOOK_TIMEOUT_SECONDS`` in
  all, however its receiver trickles (:mod:`~service.webhooks.sender`).
* **A cap per receiver.** At most ``WEBHOOK_HOST_CONCURRENCY`` games of one receiver
  (the URL's host and port) are sent at once; the others wait in a queue of that
  receiver, holding no thread, so a receiver that is slow takes at most its cap of the
  pool and every other game's deliveries go on.
* **No takeover in flight.** Just before each attempt the worker renews its claim on
  the delivery (:meth:`~service.store.outbox.Outbox.renew`: its idle time back to 0,
  only if it is still this worker's) and cuts the attempt off half a
  ``WEBHOOK_CLAIM_SECONDS`` later at the latest.  Another worker takes a delivery over
  only once it was idle a whole ``WEBHOOK_CLAIM_SECONDS``, so never while an attempt of
  it is in flight; and a delivery taken over while it waited its turn here is not sent
  here any more.
* **A bounded stop.** :meth:`DeliveryWorker.stop` takes no new delivery; each attempt
  under way ends by its deadline, so a stop takes at most ``WEBHOOK_TIMEOUT_SECONDS``
  and a second or two.

An app's webhook's delivery (:mod:`service.hosting.app_webhooks`) is sent the same
way; its attempt is logged in the app's log just after it is settled (another slot).

A refused address (:mod:`~service.webhooks.guard`) is final for its delivery: logged
``failed`` with the reason, never retried.

Retries: exponential backoff from :data:`FIRST_RETRY_SECONDS`, doubling up to
:data:`MAX_RETRY_SECONDS`, each delay counted from the failed attempt's end and drawn
uniformly between half of it and all of it (jitter, so receivers coming back are not
hit by every worker at once), until
``WEBHOOK_RETRY_SECONDS`` after the write; the last attempt is logged ``failed``.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import time
from collections import defaultdict, deque
from typing import Any
from urllib.parse import urlsplit

import orjson

from service.config import Config
from service.store.app_hook_log import AppHookLog
from service.store.outbox import Delivery, Outbox
from service.store.redis_client import RedisClient
from service.webhooks import signing
from service.webhooks.sender import Outcome, Sender
from service.workers.slot_worker import SlotWorker

log = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 1.0
MAX_RETRY_SECONDS = 3600.0
BATCH = 64
"""Deliveries of one slot taken at once."""


def retry_delay(attempt: int, rng: random.Random | None = None) -> float:
    """Seconds before the attempt after ``attempt`` (1 = the first one failed).

    >>> rng = random.Random(1)
    >>> [round(retry_delay(n, rng), 2) for n in (1, 2, 3, 4, 20)]
    [0.57, 1.85, 3.53, 5.02, 2691.78]
    >>> all(2 ** (n - 2) <= retry_delay(n) <= 2 ** (n - 1) for n in range(1, 12))
    True
    """
    # int ** int is typed Any (a negative exponent makes a float)
    full: float = min(MAX_RETRY_SECONDS, FIRST_RETRY_SECONDS * 2 ** (attempt - 1))
    return full / 2 + (rng or random).random() * full / 2


def consumer_name() -> str:
    """This worker's name in the consumer groups: host, process and a random part (a
    restarted worker is a new consumer; what the old one left is taken over)."""
    return f"{socket.gethostname()}-{os.getpid()}-{random.getrandbits(32):08x}"


class DeliveryWorker(SlotWorker):
    """Delivers the webhooks queued in a Redis (see the module's docstring)."""

    def __init__(
        self,
        client: RedisClient,
        config: Config,
        *,
        sender: Sender | None = None,
        sweeps: bool = True,
    ) -> None:
        """``sweeps=False`` for a worker that lives in the only process using its store
        (the embedded one): no hint can be missed and no other worker can die there."""
        super().__init__(
            "webhook",
            concurrency=config.webhook_concurrency,
            sweeps=sweeps,
            sweep_seconds=config.webhook_sweep_seconds,
        )
        self._outbox = Outbox(client, log_ttl_seconds=config.game_ttl_seconds)
        self._app_log = AppHookLog(lambda: client, config.game_ttl_seconds)
        self._config = config
        self._sender = sender or Sender(
            timeout=config.webhook_timeout_seconds,
            allow_http=config.webhook_allow_http,
            allow_loopback=config.webhook_allow_loopback,
        )
        self.name = consumer_name()
        self._busy: dict[int, int] = {}  # slot -> its batch's games still being sent
        self._full: set[int] = set()  # slots whose last batch was full: read again
        self._sending: dict[str, int] = {}  # receiver -> its games being sent
        self._waiting: dict[str, deque[tuple[int, list[Delivery]]]] = {}  # at their cap

    # -- finding work ------------------------------------------------------------------

    def _hints(self) -> Any:
        return self._outbox.hints()

    def _on_hint(self, data: Any) -> None:
        with self._changed:
            self._ready.add(int(data))
            self._changed.notify_all()

    def _step(self) -> None:
        with self._changed:
            due = self._due_timers()
        for slot in due:
            self._promote(slot)
        with self._changed:
            ready = [slot for slot in self._ready if slot not in self._busy]
            self._ready.difference_update(ready)
        for slot in ready:
            self._dispatch(slot, self._outbox.take(slot, self.name, BATCH))
        with self._changed:
            if self._ready.difference(self._busy) or self._stop.is_set():
                return
            self._wait()

    def _sweep(self) -> None:
        """Look at every slot's outbox: due retries moved, stale deliveries taken over."""
        idle_ms = int(self._config.webhook_claim_seconds * 1000)
        for slot in self._outbox.occupied():
            length = self._promote(slot)
            if length and slot not in self._busy:
                taken = self._outbox.reclaim(slot, self.name, idle_ms, BATCH)
                if taken:
                    log.info("webhooks: took over %d deliveries of slot %d", len(taken), slot)
                    self._dispatch(slot, taken)

    def _promote(self, slot: int) -> int:
        """Move ``slot``'s due retries into its stream; mark it ready if it holds any,
        and remember its next retry.  The number of entries in its stream."""
        _moved, length, later_ms = self._outbox.promote(slot, int(time.time() * 1000))
        with self._changed:
            if later_ms is not None:
                self._set_timer(slot, later_ms)
            if length:
                self._ready.add(slot)
        return length

    # -- delivering ------------------------------------------------------------------------

    def _dispatch(self, slot: int, deliveries: list[Delivery]) -> None:
        """Send ``deliveries`` of ``slot``: each game's in order, games in parallel."""
        if not deliveries:
            return
        by_game: dict[str, list[Delivery]] = defaultdict(list)
        for delivery in deliveries:
            by_game[delivery.game_id].append(delivery)
        with self._changed:
            self._busy[slot] = self._busy.get(slot, 0) + len(by_game)
            if len(deliveries) >= BATCH:
                self._full.add(slot)
        for game in by_game.values():
            receiver = _receiver(game[0])
            with self._changed:
                sending = self._sending.get(receiver, 0)
                if sending >= self._config.webhook_host_concurrency:
                    self._waiting.setdefault(receiver, deque()).append((slot, game))
                    continue
                self._sending[receiver] = sending + 1
            if not self._submit(receiver, slot, game):
                return

    def _submit(self, receiver: str, slot: int, deliveries: list[Delivery]) -> bool:
        try:
            self._pool.submit(self._send_all, receiver, slot, deliveries)
        except RuntimeError:  # stopping: left pending, taken over later
            return False
        return True

    def _send_all(self, receiver: str, slot: int, deliveries: list[Delivery]) -> None:
        try:
            for delivery in deliveries:
                if self._stop.is_set():
                    return  # left pending: taken over after WEBHOOK_CLAIM_SECONDS
                self._attempt(delivery)
        except Exception:
            log.exception("webhook delivery failed unexpectedly (left pending)")
        finally:
            self._settled(slot)
            self._next_of(receiver)

    def _next_of(self, receiver: str) -> None:
        """A game of ``receiver`` is done: send the next one waiting for it, if any."""
        with self._changed:
            waiting = self._waiting.get(receiver)
            if waiting and not self._stop.is_set():
                slot, deliveries = waiting.popleft()
            else:
                slot, deliveries = -1, []
                self._sending[receiver] -= 1
                if not self._sending[receiver]:
                    del self._sending[receiver]
            if not waiting:
                self._waiting.pop(receiver, None)
        if deliveries:
            self._submit(receiver, slot, deliveries)

    def _settled(self, slot: int) -> None:
        """One game of ``slot``'s batch is done: once all are, the slot may be read again."""
        with self._changed:
            self._busy[slot] -= 1
            if not self._busy[slot]:
                del self._busy[slot]
                if slot in self._full:
                    self._full.discard(slot)
                    self._ready.add(slot)
            self._changed.notify_all()

    def _attempt(self, delivery: Delivery) -> None:
        header = orjson.loads(delivery.header)
        body = orjson.loads(delivery.body)
        attempt = delivery.attempts + 1
        renewed = time.monotonic()
        if not self._outbox.renew(delivery, self.name):
            log.info("webhook %s of game %s: taken over by another worker", body["id"], header["g"])
            return
        # another worker may take it over once idle WEBHOOK_CLAIM_SECONDS from the renewal
        # (which Redis made after `renewed`): the attempt is over long before
        deadline = renewed + self._config.webhook_claim_seconds / 2
        now = time.time()
        signed = signing.headers(header["k"], body["id"], delivery.body, int(now))
        outcome = self._sender.post(header["u"], delivery.body, signed, deadline=deadline)
        retry_at = None
        if not outcome.delivered and not outcome.refused:
            # counted from the attempt's end: an attempt cut off at its deadline is
            # followed by a pause, not at once by the next one
            retry_at = time.time() + retry_delay(attempt)
            if retry_at > header["t"] / 1000 + self._config.webhook_retry_seconds:
                retry_at = None
        line = _log_line(body, attempt, now, outcome, retry_at)
        settled = self._outbox.settle(
            delivery, line, None if retry_at is None else int(retry_at * 1000)
        )
        app_id = header.get("a")
        if settled and app_id is not None:  # in the app's slot: after the settling
            self._app_log.append(
                app_id, {**line, "game_id": header["g"], "body": delivery.body.decode()}
            )
        if settled and retry_at is not None:
            with self._changed:
                self._set_timer(delivery.slot, int(retry_at * 1000))
        if not outcome.delivered:
            log.info(
                "webhook %s of game %s, attempt %d: %s",
                body["id"],
                header["g"],
                attempt,
                line["outcome"] + (f" ({outcome.error})" if outcome.error else ""),
            )


def _receiver(delivery: Delivery) -> str:
    """The receiver a delivery goes to, as its cap counts them: the URL's host and port."""
    parts = urlsplit(orjson.loads(delivery.header)["u"])
    return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


def _log_line(
    body: dict[str, Any], attempt: int, at: float, outcome: Outcome, retry_at: float | None
) -> dict[str, Any]:
    if outcome.delivered:
        result = "delivered"
    else:
        result = "failed" if retry_at is None else "retrying"
    return {
        "delivery_id": body["id"],
        "type": body["type"],
        "seq": body["seq"],
        "attempt": attempt,
        "at": round(at, 3),
        "outcome": result,
        "status": outcome.status,
        "error": outcome.error,
        "duration_ms": round(outcome.seconds * 1000, 1),
        "next_attempt_at": None if retry_at is None else round(retry_at, 3),
    }
