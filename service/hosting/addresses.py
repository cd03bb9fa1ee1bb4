"""Which hosts and addresses a webhook may reach: the judgement shared by the check at
creation (:func:`service.hosting.game_webhooks.check_url`) and the one at each delivery
(:mod:`service.webhooks.guard`), so creation refuses everything delivery would.

A URL's host is read as the resolver will read it (:func:`host_address`): IDNA with
NFKC (full-width digits are digits), a trailing dot dropped, ``localhost`` and its
subdomains as loopback, and the legacy IPv4 forms the C library still accepts
(``2130706433``, ``0x7f000001``, ``0177.0.0.1``, ``127.1``) as the address they are.

IPv6 that carries IPv4 (:func:`address_refusal`):

* IPv4-mapped ``::ffff:a.b.c.d`` is that IPv4 address (a dual-stack socket's view of
  it), judged as itself;
* the NAT64 well-known prefix ``64:ff9b::/96`` reaches the IPv4 address in its last 32
  bits through a translator: allowed only if that address is public (an IPv6-only
  network with DNS64 reaches every IPv4-only receiver this way), never loopback;
* 6to4 ``2002::/16`` is judged by the IPv4 address it embeds;
* refused outright, whatever they embed: the local-use NAT64 prefix
  ``64:ff9b:1::/48`` (where the IPv4 address sits depends on the operator's prefix
  length), IPv4-translated ``::ffff:0:0:0/96`` (stateless translators only) and the
  deprecated IPv4-compatible ``::/96``.  No receiver needs one of these, and a
  translator on the service's network would take them anywhere.

>>> host_address("0x7f000001"), host_address("１２７.１"), host_address("LocalHost.")
(IPv4Address('127.0.0.1'), IPv4Address('127.0.0.1'), IPv4Address('127.0.0.1'))
>>> host_address("hooks.example.com") is None
True
>>> address_refusal(ipaddress.ip_address("64:ff9b::a9fe:a9fe"), allow_loopback=True)
'64:ff9b::a9fe:a9fe is not a public address'
>>> address_refusal(ipaddress.ip_address("64:ff9b::5db8:d70e"), allow_loopback=False) is None
True
"""

from __future__ import annotations

import ipaddress
import socket
import unicodedata

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

LOOPBACK_NAME = ipaddress.IPv4Address("127.0.0.1")
"""What ``localhost`` and its subdomains are taken for."""

PRIVATE_SUFFIXES = ("local", "internal", "localdomain", "home.arpa", "lan", "intranet", "corp")
"""Domains only a private network resolves (mDNS, ICANN's private-use ``internal``,
RFC 8375's ``home.arpa``, and the usual private ones): never a receiver's name."""

NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
REFUSED_EMBEDDINGS = {
    ipaddress.IPv6Network("64:ff9b:1::/48"): "a local-use NAT64",
    ipaddress.IPv6Network("::ffff:0:0:0/96"): "an IPv4-translated",
    ipaddress.IPv6Network("::/96"): "an IPv4-compatible",
}


class HostRefusal(ValueError):
    """A host no delivery may go to, whatever it resolves to."""


def resolver_name(host: str) -> str:
    """``host`` as the resolver reads it: NFKC, IDNA (ASCII), lower case, without a
    trailing dot.  Raises :class:`HostRefusal` if it is no valid name.

    >>> resolver_name("Hooks.EXAMPLE.com."), resolver_name("ｅｘａｍｐｌｅ.com")
    ('hooks.example.com', 'example.com')
    """
    text = unicodedata.normalize("NFKC", host)
    if ":" not in text:  # not an IPv6 literal
        try:
            text = text.encode("idna").decode("ascii")
        except UnicodeError:
            raise HostRefusal(f"{host!r} is not a valid host name") from None
    return text.lower().removesuffix(".")


def host_address(host: str) -> Address | None:
    """The address ``host`` names without a lookup -- a literal in any form the resolver
    accepts, or ``localhost`` -- or None for a name to resolve.  Raises
    :class:`HostRefusal` for a name no receiver can have (no dot, a private domain)."""
    name = resolver_name(host)
    if name == "localhost" or name.endswith(".localhost"):
        return LOOPBACK_NAME
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        pass
    try:
        # what getaddrinfo does with a numeric host: 127.1, 0x7f.1, 2130706433, 0177.0.0.1
        return ipaddress.IPv4Address(socket.inet_aton(name))
    except OSError:
        pass
    if "." not in name:
        raise HostRefusal(f"{host} is not a public name (no domain)")
    if any(name == s or name.endswith("." + s) for s in PRIVATE_SUFFIXES):
        raise HostRefusal(f"{host} is not a public name (a private domain)")
    return None


def address_refusal(address: Address, *, allow_loopback: bool) -> str | None:
    """Why no delivery may go to ``address`` (None: it may): anything but a global
    unicast address -- loopback (unless ``allow_loopback``), private, link-local
    (169.254.169.254, the cloud metadata service, among them), shared (100.64/10),
    reserved, multicast, unspecified -- and IPv6 carrying IPv4 as the module's
    docstring says.

    >>> address_refusal(ipaddress.ip_address("169.254.169.254"), allow_loopback=True)
    '169.254.169.254 is not a public address'
    >>> address_refusal(ipaddress.ip_address("::ffff:127.0.0.1"), allow_loopback=True) is None
    True
    >>> address_refusal(ipaddress.ip_address("::ffff:0:a00:1"), allow_loopback=False)
    '::ffff:0:a00:1 is an IPv4-translated address: refused'
    """
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address_refusal(address.ipv4_mapped, allow_loopback=allow_loopback)
        if address in NAT64:
            inner = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
            if address_refusal(inner, allow_loopback=False) is not None:
                return f"{address} is not a public address"
            return None
        for network, kind in REFUSED_EMBEDDINGS.items():
            if address in network and int(address) > 1:  # :: and ::1 are judged below
                return f"{address} is {kind} address: refused"
        if address.sixtofour is not None:
            if address_refusal(address.sixtofour, allow_loopback=False) is not None:
                return f"{address} is not a public address"
    if address.is_loopback:
        return None if allow_loopback else f"{address} is a loopback address"
    if not address.is_global or address.is_multicast:
        return f"{address} is not a public address"
    return None
