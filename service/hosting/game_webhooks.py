"""A game's webhook: where it is told what happens, and what each of its events sends.

A game created with a ``webhook`` keeps a :class:`Webhook` in its record: the URL, the
events it wants, the secret that signs every delivery (generated here, shown once to
the creator, kept in the document as the seed is) and the hash of the token that reads
its delivery log.  :mod:`~service.hosting.webhook_deliveries` turns a write's events
into the bodies to send;
the store queues them in the same atomic script as the write
(:mod:`service.store.outbox`), and the delivery workers (:mod:`service.webhooks`) sign
and send them.  No body carries a token, a hand or anything private to a seat.

>>> hook, token = new_webhook("https://example.com/t13", ["turn"])
>>> hook.secret.startswith("whsec_"), hook.token_hash == hash_token(token)
(True, True)
>>> Webhook.from_dict(hook.to_dict()) == hook
True
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from service.hosting.addresses import HostRefusal, address_refusal, host_address
from service.hosting.refusals import HostingError
from service.hosting.tokens import hash_token, new_token

SECRET_BYTES = 32
"""Random bytes of a signing secret (Standard Webhooks: ``whsec_`` + base64)."""

MAX_URL_LENGTH = 2048


class HookEvent(StrEnum):
    """What a webhook can be told (``events`` at creation; every one by default)."""

    TURN = "turn"
    """A human seat is to play: ``seat``, ``name``, ``round``, ``deadline`` (epoch
    seconds, or null without a turn timer)."""
    SEAT_JOINED = "seat_joined"
    """A seat was taken: ``seat``, ``name``, ``bot``."""
    GAME_STARTED = "game_started"
    """Every seat is taken and round 1 is dealt: ``seats``."""
    ROUND_SCORED = "round_scored"
    """A round ended: ``result`` (every hand revealed, as in the public view) and ``totals``."""
    GAME_FINISHED = "game_finished"
    """The last round was scored: ``winners`` and ``totals``."""


URL_FIELD = "webhook.url"
"""The field of a create request a refusal names."""


class WebhookRefusedError(HostingError):
    """A webhook URL the service will not call (answered 422)."""

    code = "WEBHOOK_URL_REFUSED"


@dataclass(frozen=True, slots=True)
class Webhook:
    url: str
    events: tuple[str, ...]
    secret: str
    token_hash: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "events": list(self.events),
            "secret": self.secret,
            "token_hash": self.token_hash,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Webhook:
        return cls(data["url"], tuple(data["events"]), data["secret"], data["token_hash"])


def new_secret() -> str:
    """A signing secret in the Standard Webhooks form: ``whsec_`` and base64 of 32
    random bytes (the key is those bytes)."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def new_webhook(url: str, events: Sequence[str]) -> tuple[Webhook, str]:
    """A webhook for ``url`` and ``events`` (all of them when empty), and the token that
    reads its delivery log (only its hash is kept)."""
    token = new_token()
    wanted = tuple(e.value for e in HookEvent if not events or e.value in events)
    return Webhook(url, wanted, new_secret(), hash_token(token)), token


def check_url(url: str, *, allow_http: bool, allow_loopback: bool) -> None:
    """Refuse a URL the service will not call: another scheme than https (http too
    with ``allow_http``), credentials, a fragment, no host, or a host that names an
    address no delivery may reach -- in any form the resolver reads as an address
    (``0x7f000001``, ``127.1``, full-width digits, ``localhost.``:
    :func:`~service.hosting.addresses.host_address`) -- or a name no receiver can have
    (no domain, a private one).  Any other name is resolved and its addresses checked
    at each delivery (:mod:`service.webhooks.guard`), not here: creation tells a client
    nothing of what a name resolves to.

    >>> check_url("https://hooks.example.com/t13?x=1", allow_http=False, allow_loopback=False)
    >>> check_url("http://example.com/", allow_http=False, allow_loopback=False)
    Traceback (most recent call last):
    ...
    service.hosting.game_webhooks.WebhookRefusedError: the URL must be https://
    >>> check_url("https://10.1.2.3/", allow_http=False, allow_loopback=False)
    Traceback (most recent call last):
    ...
    service.hosting.game_webhooks.WebhookRefusedError: 10.1.2.3 is not a public address
    """
    if any(c.isspace() or not c.isprintable() for c in url):
        raise WebhookRefusedError(
            "the URL must not hold spaces or control characters", field=URL_FIELD
        )
    if len(url) > MAX_URL_LENGTH:
        raise WebhookRefusedError(
            f"the URL is longer than {MAX_URL_LENGTH} characters", field=URL_FIELD
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebhookRefusedError(f"not a URL: {exc}", field=URL_FIELD) from None
    schemes = ("https", "http") if allow_http else ("https",)
    if parts.scheme not in schemes:
        raise WebhookRefusedError(
            "the URL must be " + " or ".join(f"{s}://" for s in schemes), field=URL_FIELD
        )
    if parts.username is not None or parts.password is not None:
        raise WebhookRefusedError("the URL must not carry credentials", field=URL_FIELD)
    if parts.fragment:
        raise WebhookRefusedError("the URL must not have a fragment", field=URL_FIELD)
    host = parts.hostname
    if not host or port == 0:
        raise WebhookRefusedError("the URL has no host or port", field=URL_FIELD)
    try:
        address = host_address(host)
    except HostRefusal as exc:
        raise WebhookRefusedError(str(exc), field=URL_FIELD) from None
    if address is None:
        return  # a name: checked when it is resolved, at each delivery
    refusal = address_refusal(address, allow_loopback=allow_loopback)
    if refusal is not None:
        raise WebhookRefusedError(refusal, field=URL_FIELD)


def delivery_id() -> str:
    """A delivery's id (``webhook-id``): the same for every attempt of one delivery."""
    return "msg_" + secrets.token_urlsafe(16)
