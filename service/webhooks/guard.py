"""Where a delivery may go: the addresses of its URL's host, resolved at every attempt
and every one checked (:func:`~service.hosting.webhooks.address_refusal`), so a name
that points at a private, loopback, link-local or metadata address -- now, or after
the game was created -- is refused.  The delivery then connects to the address checked
here, never to a fresh lookup (:mod:`~service.webhooks.sender`).

>>> stub = lambda host, port: {"hooks.example.com": ["93.184.215.14"]}.get(host, ["10.0.0.7"])
>>> checked_address("hooks.example.com", 443, stub, allow_loopback=False)
'93.184.215.14'
>>> checked_address("intranet.example.com", 443, stub, allow_loopback=False)
Traceback (most recent call last):
...
service.webhooks.guard.RefusedAddress: intranet.example.com: 10.0.0.7 is not a public address
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

from service.hosting.webhooks import address_refusal

Resolver = Callable[[str, int], list[str]]
"""``(host, port) -> addresses`` (text), as :func:`system_resolver` answers."""


class RefusedAddress(Exception):
    """The URL's host has no address a delivery may reach."""


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of ``host`` (IPv4 and IPv6), from the system's resolver."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise RefusedAddress(f"{host}: cannot be resolved ({exc})") from None
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def checked_address(host: str, port: int, resolver: Resolver, *, allow_loopback: bool) -> str:
    """The address to connect to for ``host``: the first it resolves to, once every one
    of them was found allowed.  Raises :class:`RefusedAddress` if any is refused (a
    name with one private address among public ones is refused: which one a client
    would use is not ours to guess) or there is none."""
    addresses = resolver(host, port)
    if not addresses:
        raise RefusedAddress(f"{host}: no address")
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # drop an IPv6 zone
        refusal = address_refusal(address, allow_loopback=allow_loopback)
        if refusal is not None:
            raise RefusedAddress(f"{host}: {refusal}")
    return addresses[0]
