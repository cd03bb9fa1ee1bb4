"""Free TCP ports on 127.0.0.1 for the throwaway servers."""

from __future__ import annotations

import random
import socket


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether ``port`` can be bound on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def free_port_on(hosts: list[str]) -> int:
    """A TCP port free on every one of ``hosts`` (loopback addresses) a moment ago."""
    for _ in range(200):
        port = free_port(hosts[0])
        if all(is_free(port, host) for host in hosts[1:]):
            return port
    raise RuntimeError(f"no port free on all of {hosts}")


def free_cluster_port() -> int:
    """A free port P <= 55535 whose cluster bus port P + 10000 is free too."""
    for _ in range(200):
        port = random.randint(20000, 45000)
        if is_free(port) and is_free(port + 10000):
            return port
    raise RuntimeError("no free port pair for a cluster node")
