"""The private names of libraries the service still needs, and only here.

Each is used because no public API does the job (the reason is at each one).
An upgrade that removes or renames one fails ``tests/test_library_internals.py``
with the name in the message; :data:`PRIVATE_NAMES` is what that test checks.
Where a public API does the job the code uses it: webargs' ``load_json``
(service/api/blueprint.py), flask-smorest's ``init_app`` (service/app.py).

Nothing here imports redis at module level: :mod:`service.serving` uses this
module in the gunicorn master, which imports nothing of the app before gevent
patches the worker.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

PRIVATE_NAMES: tuple[tuple[str, str, str], ...] = (
    (
        "redis.connection",
        "AbstractConnection._connect",
        "one socket attempt, which connect() retries; store/bounded.py bounds each",
    ),
    (
        "gunicorn.util",
        "write_error",
        "how gunicorn writes its own error pages (Worker.handle_error); serving.py "
        "answers them as problem+json",
    ),
    (
        "gunicorn.util",
        "write_nonblock",
        "gunicorn's write of a whole answer on a worker socket (serving.py)",
    ),
)
"""(module, attribute path, why) of each private name of a library in use.

Also used, but an instance attribute (checked on a live connection by the test):
redis-py's ``Connection._sock``, the socket, which no public API exposes."""


def connection_socket(conn: Any) -> socket.socket | None:
    """The socket of a redis-py connection (None when not connected)."""
    return conn._sock  # type: ignore[no-any-return]


class ConnectHook:
    """Mixin over a redis-py connection class (before it in the bases): each
    socket it opens is opened through :meth:`open_socket`.

    redis-py's public ``connect()`` retries its private ``_connect()`` (one
    attempt: TCP connect, TLS) and then runs the handshake; a hook on the
    attempt is the only place where each attempt's wait can be set and each
    attempt's failure seen.
    """

    def _connect(self) -> Any:
        return self.open_socket(super()._connect)  # type: ignore[misc]

    def open_socket(self, attempt: Callable[[], Any]) -> Any:
        """Open one socket by calling ``attempt()``; override to wrap it."""
        return attempt()


def write_gunicorn_errors_with(write: Callable[[socket.socket, int, str, str], None]) -> None:
    """Make gunicorn write its own error answers (400, 414, ...) with ``write(sock,
    status, reason, message)``: it has no public hook for them, only this
    function of its ``util`` module, which ``Worker.handle_error`` calls."""
    from gunicorn import util

    # replacing a module-level def, which mypy treats as not assignable
    util.write_error = write  # type: ignore[assignment]


def write_on_worker_socket(sock: socket.socket, data: bytes) -> None:
    """Write ``data`` whole on a gunicorn worker's client socket, as gunicorn does."""
    from gunicorn import util

    util.write_nonblock(sock, data)
