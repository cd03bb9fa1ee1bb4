"""One attempt of a delivery: a POST to the checked address, nothing more.

* The URL is checked again (scheme, credentials, literal addresses: the settings may
  have changed since the game was made), its host resolved and every address checked
  (:mod:`~service.webhooks.guard`); the connection goes to the address checked --
  with the URL's host in ``Host`` and, over TLS, in SNI and the certificate check --
  so a second lookup cannot send it elsewhere (DNS rebinding).
* Timeouts: ``WEBHOOK_TIMEOUT_SECONDS`` to connect, and again for each read of the
  answer; at most :data:`MAX_RESPONSE_BYTES` of the answer's body are read.
* Redirects are never followed: a 3xx answer is a failed attempt like any other
  non-2xx one (the log says where it pointed), so no delivery reaches an address by
  way of a redirect.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3

from service.hosting.webhooks import WebhookRefusedError, check_url
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

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


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
        self._timeout = urllib3.Timeout(connect=timeout, read=timeout)
        self._allow_http = allow_http
        self._allow_loopback = allow_loopback
        self._resolver = resolver

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> Outcome:
        """POST ``body`` (JSON) with ``headers`` to ``url``; never raises."""
        started = time.monotonic()
        try:
            status, error = self._post(url, body, headers)
        except (WebhookRefusedError, RefusedAddress) as exc:
            status, error = None, f"refused: {exc}"
        except urllib3.exceptions.HTTPError as exc:
            status, error = None, f"{type(exc).__name__}: {exc}"
        except OSError as exc:
            status, error = None, f"{type(exc).__name__}: {exc}"
        return Outcome(status, error, time.monotonic() - started)

    def _post(self, url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str | None]:
        check_url(url, allow_http=self._allow_http, allow_loopback=self._allow_loopback)
        parts = urlsplit(url)
        host = parts.hostname or ""
        https = parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        address = checked_address(host, port, self._resolver, allow_loopback=self._allow_loopback)
        pool: urllib3.HTTPConnectionPool
        if https:
            pool = urllib3.HTTPSConnectionPool(
                address,
                port,
                timeout=self._timeout,
                retries=False,
                maxsize=1,
                cert_reqs="CERT_REQUIRED",
                server_hostname=host,
                assert_hostname=host,
            )
        else:
            pool = urllib3.HTTPConnectionPool(
                address, port, timeout=self._timeout, retries=False, maxsize=1
            )
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sent = {
            **headers,
            "Host": parts.netloc,
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
        }
        try:
            response = pool.urlopen(
                "POST",
                target,
                body=body,
                headers=sent,
                redirect=False,
                retries=False,
                preload_content=False,
                assert_same_host=False,
            )
            try:
                response.read(MAX_RESPONSE_BYTES)
            finally:
                response.release_conn()
        finally:
            pool.close()
        error = None
        if 300 <= response.status < 400:
            location = response.headers.get("Location", "")[:200]
            error = f"redirect to {location!r} not followed"
        elif not 200 <= response.status < 300:
            error = f"answered {response.status}"
        return response.status, error
