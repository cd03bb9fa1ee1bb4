"""One attempt of a delivery: a POST to the checked address, nothing more.

* The URL is checked again (scheme, credentials, literal addresses: the settings may
  have changed since the game was made), its host resolved and every address checked
  (:mod:`~service.webhooks.guard`); the connection goes to the address checked --
  with the URL's host in ``Host`` and, over TLS, in SNI and the certificate check --
  so a second lookup cannot send it elsewhere (DNS rebinding).  A refused address is
  a refused attempt (:attr:`Outcome.refused`), and its error names the host only:
  never the address it resolved to, which the webhook's creator would read in the
  log (a DNS oracle into the service's network).
* One deadline for the whole attempt, ``WEBHOOK_TIMEOUT_SECONDS`` (or sooner, as the
  worker asks): the TCP connect is bounded by it as a socket timeout, and from the
  moment the socket exists -- TLS handshake, request, answer -- the connection is shut
  down when it passes (:mod:`~service.webhooks.deadlines`), however the receiver
  trickles.  At
  most :data:`MAX_RESPONSE_BYTES` of the answer's body are read.
* Redirects are never followed: a 3xx answer is a failed attempt like any other
  non-2xx one (the log says where it pointed), so no delivery reaches an address by
  way of a redirect.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection

from service.hosting.game_webhooks import WebhookRefusedError, check_url
from service.webhooks.deadlines import Deadlines, Watch
from service.webhooks.guard import RefusedAddress, Resolver, checked_address, system_resolver

MAX_RESPONSE_BYTES = 64 * 1024
"""The most of an answer's body a delivery reads (it only needs the status)."""

USER_AGENT = "three-thirteen-webhooks/1"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt got: the answer's status, or why there was none."""

    status: int | None
    error: str | None
    seconds: float
    refused: bool = False
    """The URL or its host's addresses were refused: no connection was made, and none
    will be for this delivery."""

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class DeadlinePassed(Exception):
    """The attempt's deadline passed before it was done."""


class Sender:
    """Sends attempts under the service's settings (see the module's docstring)."""

    def __init__(
        self,
        *,
        timeout: float,
        allow_http: bool,
        allow_loopback: bool,
        resolver: Resolver = system_resolver,
    ) -> None:
        self._seconds = timeout
        self._allow_http = allow_http
        self._allow_loopback = allow_loopback
        self._resolver = resolver
        self._deadlines = Deadlines()

    def post(
        self, url: str, body: bytes, headers: dict[str, str], *, deadline: float | None = None
    ) -> Outcome:
        """POST ``body`` (JSON) with ``headers`` to ``url``, done or cut off by
        ``deadline`` (``time.monotonic()``; at most ``timeout`` from now); never raises."""
        started = time.monotonic()
        until = started + self._seconds
        if deadline is not None:
            until = min(until, deadline)
        refused = False
        try:
            status, error = self._post(url, body, headers, until)
        except (WebhookRefusedError, RefusedAddress) as exc:
            status, error, refused = None, f"refused: {exc}", True
        except DeadlinePassed:
            status, error = None, f"timed out: no answer within {until - started:.1f} s in all"
        except urllib3.exceptions.HTTPError as exc:
            status, error = None, f"{type(exc).__name__}: {exc}"
        except OSError as exc:
            status, error = None, f"{type(exc).__name__}: {exc}"
        return Outcome(status, error, time.monotonic() - started, refused)

    def _post(
        self, url: str, body: bytes, headers: dict[str, str], until: float
    ) -> tuple[int, str | None]:
        check_url(url, allow_http=self._allow_http, allow_loopback=self._allow_loopback)
        parts = urlsplit(url)
        host = parts.hostname or ""
        https = parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        address = checked_address(host, port, self._resolver, allow_loopback=self._allow_loopback)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sent = {
            **headers,
            "Host": parts.netloc,
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
        }
        with self._deadlines.watch(until) as watch:
            conn: _WatchedHTTPConnection | _WatchedHTTPSConnection
            if https:
                conn = _WatchedHTTPSConnection(
                    address,
                    port,
                    timeout=_left(until),
                    cert_reqs="CERT_REQUIRED",
                    server_hostname=host,
                    assert_hostname=host,
                )
            else:
                conn = _WatchedHTTPConnection(address, port, timeout=_left(until))
            conn.watch = watch
            try:
                conn.request("POST", target, body=body, headers=sent, preload_content=False)
                response = conn.getresponse()
                response.read(MAX_RESPONSE_BYTES)
            except (urllib3.exceptions.HTTPError, OSError):
                if time.monotonic() >= until:
                    raise DeadlinePassed() from None
                raise
            finally:
                conn.close()
        if watch.fired:  # cut off just as the answer was read
            raise DeadlinePassed()
        error = None
        if 300 <= response.status < 400:
            location = response.headers.get("Location", "")[:200]
            error = f"redirect to {location!r} not followed"
        elif not 200 <= response.status < 300:
            error = f"answered {response.status}"
        return response.status, error


class _WatchedHTTPConnection(HTTPConnection):
    """A connection whose socket is handed to its attempt's :class:`Watch` as soon as it
    is connected (before any TLS handshake), and whose reads wait no longer than the
    deadline."""

    watch: Watch

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        self.watch.attach(sock)
        sock.settimeout(_left(self.watch.deadline))
        return sock


class _WatchedHTTPSConnection(HTTPSConnection):
    """:class:`_WatchedHTTPConnection` over TLS."""

    watch: Watch

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        self.watch.attach(sock)
        sock.settimeout(_left(self.watch.deadline))
        return sock


def _left(until: float) -> float:
    """Seconds until ``until``, raising :class:`DeadlinePassed` when none are left."""
    left = until - time.monotonic()
    if left <= 0:
        raise DeadlinePassed()
    return left
