"""The gunicorn worker the service runs on: gevent, with bounded slow clients.

``deploy/gunicorn.conf.py`` names :class:`Worker`.  It is gunicorn's gevent
worker (a connection is a greenlet, so hundreds of slow or waiting clients
cost memory, not the worker) with two changes:

* A request body must arrive within ``BODY_TIMEOUT_SECONDS`` of its headers
  (:class:`BodyDeadline`): a client trickling it is answered 408
  ``REQUEST_TIMEOUT`` and its connection closed.  Headers are bounded by
  gunicorn itself: the gevent worker reads each request's line and headers
  within ``keepalive`` seconds, else closes the connection.
* What gunicorn answers on its own, for requests it cannot parse (request
  line or headers too large, garbage, an unsupported ``Expect`` or
  transfer coding), is ``application/problem+json`` with the API's stable
  codes, not gunicorn's HTML page (:func:`write_problem`).

A waiting client costs the objects its connection and request hold, and every
full garbage collection of the worker walks them all: the worker freezes what
the app made at import, and leaves out what it does not use (gevent's greenlet
tree, gunicorn's Early Hints callback).

This module is imported by the gunicorn master to find the worker class,
before gevent patches anything (that happens in the worker): it imports
nothing of the app.  The app's modules it uses are imported in the worker,
where the app is loaded by then.
"""

from __future__ import annotations

import gc
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import gevent
from gunicorn.workers.ggevent import GeventWorker
from werkzeug.exceptions import HTTPException, RequestTimeout

from service.config import Config
from service.library_internals import write_gunicorn_errors_with, write_on_worker_socket

# gevent records each greenlet's spawning stack and tree (for debugging tools):
# a handful of objects per connection that every full garbage collection walks,
# thousands of times over with thousands of waiting clients.  Set before the
# worker's hub and greenlets exist (this module is imported by the master).
gevent.config.track_greenlet_tree = False

StartResponse = Callable[..., Any]
App = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

DETAIL_CHARS = 200
"""gunicorn's message (which may quote the request) is cut to this length."""


def problem_response(status: int, reason: str, message: str) -> bytes:
    """The whole HTTP answer gunicorn would send as an HTML page, as problem+json.

    >>> problem_response(414, "URI Too Long", "Request Line is too large (9000 > 8190)")[:40]
    b'HTTP/1.1 414 URI Too Long\\r\\nConnection: c'
    """
    from service.api import problems  # in the worker, where the app has imported it

    code = problems.code_for_status(status)
    detail = message[:DETAIL_CHARS] or (
        "internal error; it has been logged" if status >= 500 else problems.CODES[code][1]
    )
    response = problems.problem(code, detail, status=status)
    head = f"HTTP/1.1 {response.status_code} {reason}\r\nConnection: close\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in response.headers.items())
    return (head + "\r\n").encode("latin-1") + response.get_data()


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """Drop-in for ``gunicorn.util.write_error``: the same answer, as problem+json."""
    write_on_worker_socket(sock, problem_response(status_int, reason, mesg))


class DeadlineInput:
    """``wsgi.input`` whose reads all end by ``deadline`` (``time.monotonic()``).

    Past it, a read raises werkzeug's ``RequestTimeout`` (the app answers 408
    problem+json through its usual error mapping) and stops reading from the
    client: the rest of the body is not waited for, the connection closes
    once that answer is sent.
    """

    def __init__(self, stream: Any, deadline: float, seconds: int, sock: Any) -> None:
        self._stream = stream
        self._deadline = deadline
        self._seconds = seconds
        self._sock = sock
        self.expired = False

    def _call(self, read: Callable[..., Any], *args: Any) -> Any:
        remaining = self._deadline - time.monotonic()
        if remaining > 0 and not self.expired:
            timeout = gevent.Timeout(remaining)
            timeout.start()
            try:
                return read(*args)
            except gevent.Timeout as fired:
                if fired is not timeout:
                    raise
            finally:
                timeout.close()
        return self._expire()

    def _expire(self) -> Any:
        if not self.expired and self._sock is not None:
            self.expired = True
            try:
                self._sock.shutdown(socket.SHUT_RD)  # the parser then finds the body ended
            except OSError:
                pass
        raise RequestTimeout(f"the request body did not arrive within {self._seconds} s")

    def read(self, size: int | None = None) -> bytes:
        return self._call(self._stream.read, size)  # type: ignore[no-any-return]

    def readline(self, size: int | None = None) -> bytes:
        return self._call(self._stream.readline, size)  # type: ignore[no-any-return]

    def readlines(self, hint: int | None = None) -> list[bytes]:
        return self._call(self._stream.readlines, hint)  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line


class BodyDeadline:
    """WSGI middleware: a request's body must arrive within ``seconds`` of its headers."""

    def __init__(self, app: App, seconds: int) -> None:
        self.app = app
        self.seconds = seconds

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        # The service sends no 103 Early Hints: gunicorn's per-request callback for
        # them (a closure over its request, response and socket) would live as
        # long as a waiting client's request, walked by every full collection.
        environ.pop("wsgi.early_hints", None)
        if environ.get("CONTENT_LENGTH", "") not in ("", "0") or environ.get(
            "HTTP_TRANSFER_ENCODING"
        ):
            environ["wsgi.input"] = DeadlineInput(
                environ["wsgi.input"],
                time.monotonic() + self.seconds,
                self.seconds,
                environ.get("gunicorn.socket"),
            )
        try:
            return self.app(environ, start_response)
        except HTTPException as exc:  # a read before the app's error handling (the fast lane's)
            from service.api import problems

            return problems.answer_for(exc)(environ, start_response)


class Worker(GeventWorker):
    """gunicorn's gevent worker, with a body deadline and problem+json error pages."""

    def init_process(self) -> None:
        # gunicorn writes its own error answers through this one function only
        # (Worker.handle_error); ours keeps its status and message.
        write_gunicorn_errors_with(write_problem)
        super().init_process()

    def load_wsgi(self) -> None:
        super().load_wsgi()
        # What the app made at import lives as long as the worker: out of the
        # collector's way, so that a full collection walks only what requests
        # made (thousands of waiting clients' greenlets and frames).
        gc.collect()
        gc.freeze()
        # The app's ``wsgi_app`` itself (Flask's ``__call__`` only calls it), and the
        # deadline's bound ``__call__``: no call through an instance, each of which
        # would recurse in C under every waiting client (see service/app.py).
        inner = getattr(self.wsgi, "wsgi_app", self.wsgi)
        # types-gunicorn declares environ a MutableMapping; gunicorn passes a dict, as
        # PEP 3333 requires, and the app's layers are typed for that
        self.wsgi = BodyDeadline(  # type: ignore[assignment]
            inner, Config.from_env().body_timeout_seconds
        ).__call__
