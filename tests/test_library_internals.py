"""The private names of libraries the service uses (service/library_internals.py):
each still exists, and still does what the service uses it for.  An upgrade that
removes or changes one fails here, by name, instead of somewhere in production."""

from __future__ import annotations

import importlib
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
import redis
from gunicorn.workers.base import Worker

from service.library_internals import (
    PRIVATE_NAMES,
    ConnectHook,
    connection_socket,
)


@pytest.mark.parametrize(
    ("module", "path", "why"), PRIVATE_NAMES, ids=[f"{m}.{p}" for m, p, _ in PRIVATE_NAMES]
)
def test_private_name_exists(module: str, path: str, why: str) -> None:
    target: Any = importlib.import_module(module)
    for part in path.split("."):
        assert hasattr(target, part), (
            f"{module}.{path} is gone (used for: {why}); see service/library_internals.py"
        )
        target = getattr(target, part)
    assert callable(target), f"{module}.{path} is no longer callable (used for: {why})"


def test_gunicorn_writes_its_error_pages_through_util_write_error() -> None:
    assert "write_error" in Worker.handle_error.__code__.co_names, (
        "gunicorn's Worker.handle_error no longer calls util.write_error: "
        "its error pages are not problem+json any more (service/serving.py)"
    )


class _Counted(ConnectHook, redis.Connection):
    attempts: list[Any]

    def open_socket(self, attempt: Callable[[], Any]) -> Any:
        made = attempt()
        self.attempts.append(made)
        return made


def test_connect_hook_sees_each_socket_and_connection_socket_is_it(redis_url: str) -> None:
    """redis-py's connect() opens its socket through the hooked ``_connect``, and
    the connection's socket (``_sock``) is the one the hook saw."""
    pool = redis.ConnectionPool.from_url(redis_url, connection_class=_Counted)
    conn = pool.make_connection()
    assert isinstance(conn, _Counted)
    conn.attempts = []
    assert connection_socket(conn) is None, "redis-py Connection._sock: not None before connect"
    conn.connect()
    try:
        assert len(conn.attempts) == 1, "redis-py's connect() no longer calls _connect()"
        sock = connection_socket(conn)
        assert isinstance(sock, socket.socket), "redis-py Connection._sock is gone"
        assert sock is conn.attempts[0]
        conn.send_command("PING")
        assert conn.read_response() in (b"PONG", "PONG", True)
    finally:
        conn.disconnect()
    assert connection_socket(conn) is None, "redis-py Connection._sock: not None after disconnect"


def test_the_gunicorn_master_imports_no_redis() -> None:
    """service/serving.py (imported by the master, before gevent patches the
    worker) uses this module: it must not import redis when loaded."""
    code = "import sys, service.serving; print('redis' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
