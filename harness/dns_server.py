"""A tiny DNS server answering A queries from a fixed table, for tests.

deploy/nginx.conf finds the API's replicas by asking Docker's embedded DNS for
``api`` at request time: every replica's address comes back and nginx spreads
requests over them (its resolver starts each request at a random one of them,
and passes a failed request on to the next).  The tests run that config as
shipped with this server standing in for Docker's, answering ``api`` with one
loopback address per instance, so nginx balances and fails over exactly as it
does in compose.

    with DnsServer({"api": ["127.0.1.1", "127.0.1.2"]}) as dns:
        ...  # resolver 127.0.0.1:{dns.port}

Only what nginx asks is answered: A queries for a name of the table (AAAA and
other types of a known name get no records; unknown names NXDOMAIN).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Mapping, Sequence

TYPE_A = 1
CLASS_IN = 1
TTL_SECONDS = 1


def _question(packet: bytes) -> tuple[str, int, int, int]:
    """The first question's (name, type, class) and the offset just past it."""
    labels = []
    offset = 12
    while (length := packet[offset]) != 0:
        labels.append(packet[offset + 1 : offset + 1 + length].decode("ascii").lower())
        offset += 1 + length
    qtype, qclass = struct.unpack("!HH", packet[offset + 1 : offset + 5])
    return ".".join(labels), qtype, qclass, offset + 5


def answer(packet: bytes, table: Mapping[str, Sequence[str]]) -> bytes:
    """The response to one query ``packet``.

    >>> query = bytes.fromhex("1234 0100 0001 0000 0000 0000 03 617069 00 0001 0001")
    >>> reply = answer(query, {"api": ["127.0.1.1", "127.0.1.2"]})
    >>> reply[:2].hex(), struct.unpack("!H", reply[6:8])[0], socket.inet_ntoa(reply[-4:])
    ('1234', 2, '127.0.1.2')
    """
    (ident,) = struct.unpack("!H", packet[:2])
    name, qtype, qclass, end = _question(packet)
    addresses = table.get(name)
    rcode = 3 if addresses is None else 0  # NXDOMAIN
    records = addresses if addresses and qtype == TYPE_A and qclass == CLASS_IN else []
    header = struct.pack("!HHHHHH", ident, 0x8180 | rcode, 1, len(records), 0, 0)
    body = b"".join(
        struct.pack("!HHHIH", 0xC00C, TYPE_A, CLASS_IN, TTL_SECONDS, 4) + socket.inet_aton(a)
        for a in records
    )
    return header + packet[12:end] + body


class DnsServer:
    """Answers queries on a free UDP port of 127.0.0.1 from a thread, until stopped."""

    def __init__(self, table: Mapping[str, Sequence[str]]) -> None:
        self.table = {name.lower(): list(addresses) for name, addresses in table.items()}
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)  # how soon stop() is noticed
        self.port: int = self.sock.getsockname()[1]
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                packet, peer = self.sock.recvfrom(512)
            except TimeoutError:
                continue
            with contextlib.suppress(IndexError, UnicodeDecodeError, struct.error, OSError):
                self.sock.sendto(answer(packet, self.table), peer)

    def start(self) -> DnsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.sock.close()

    def __enter__(self) -> DnsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def lookup(name: str, port: int, timeout: float = 2.0) -> list[str]:
    """The A records a :class:`DnsServer` on 127.0.0.1:``port`` answers for ``name``
    (a resolver for tests: a delivery worker's ``resolver=lambda host, _port: lookup(host,
    dns.port)``).  Empty for an unknown name.

    >>> with DnsServer({"hooks.test": ["10.0.0.7"]}) as dns:
    ...     lookup("hooks.test", dns.port), lookup("other.test", dns.port)
    (['10.0.0.7'], [])
    """
    question = b"".join(bytes([len(label)]) + label.encode() for label in name.split("."))
    query = struct.pack("!HHHHHH", 0x5454, 0x0100, 1, 0, 0, 0) + question + b"\0"
    query += struct.pack("!HH", TYPE_A, CLASS_IN)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        sock.sendto(query, ("127.0.0.1", port))
        reply, _ = sock.recvfrom(512)
    (count,) = struct.unpack("!H", reply[6:8])
    offset = len(query)  # the answers follow the question, each 16 bytes (name pointer)
    found = []
    for _ in range(count):
        found.append(socket.inet_ntoa(reply[offset + 12 : offset + 16]))
        offset += 16
    return found
