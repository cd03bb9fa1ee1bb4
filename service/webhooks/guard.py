"""Where a delivery may go: the addresses of its URL's host, resolved at every attempt
and every one checked (:func:`~service.hosting.addresses.address_refusal`), so a name
that points at a private, loopback, link-local or metadata address -- now, or after
the game was created -- is refused.  The delivery then connects to the address checked
here, never to a fresh lookup (:mod:`~service.webhooks.sender`).

A refusal names the host only, never what it resolved to nor why that was refused,
and a name that does not resolve is refused in the same words: the refusal reaches
the webhook's creator (the delivery log), who must not learn from it what the
service's resolver says about internal names (a DNS oracle).

>>> stub = lambda host, port: {"hooks.example.com": ["93.184.215.14"]}.get(host, ["10.0.0.7"])
>>> checked_address("hooks.example.com", 443, stub, allow_loopback=False)
'93.184.215.14'
>>> checked_address("intranet.example.com", 443, stub, allow_loopback=False)
Traceback (most recent call last):
...
service.webhooks.guard.RefusedAddress: intranet.example.com: no address a delivery may reach
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

from service.hosting.addresses import address_refusal

Resolver = Callable[[str, int], list[str]]
"""``(host, port) -> addresses`` (text), as :func:`system_resolver` answers."""


class RefusedAddress(Exception):
    """The URL's host has no address a delivery may reach."""

    def __init__(self, host: str) -> None:
        super().__init__(f"{host}: no address a delivery may reach")


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of ``host`` (IPv4 and IPv6), from the system's resolver."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise RefusedAddress(host) from None
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def checked_address(host: str, port: int, resolver: Resolver, *, allow_loopback: bool) -> str:
    """The address to connect to for ``host``: the first it resolves to, once every one
    of them was found allowed.  Raises :class:`RefusedAddress` if any is refused (a
    name with one private address among public ones is refused: which one a client
    would use is not ours to guess) or there is none."""
    addresses = resolver(host, port)
    if not addresses:
        raise RefusedAddress(host)
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # drop an IPv6 zone
        if address_refusal(address, allow_loopback=allow_loopback) is not None:
            raise RefusedAddress(host)
    return addresses[0]
