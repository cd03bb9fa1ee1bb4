"""A directory served over HTTP on a free 127.0.0.1 port, in a thread: a web page's
own origin, for tests that load it in a browser.

    with StaticServer(Path("examples/web")) as site:
        driver.get(site.url + "/index.html")
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class StaticServer:
    """Serves ``root`` read-only at ``url`` until :meth:`stop`."""

    def __init__(self, root: Path, host: str = "127.0.0.1") -> None:
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.host = host
        self.httpd = ThreadingHTTPServer((host, 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.httpd.server_port}"

    def start(self) -> StaticServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)

    def __enter__(self) -> StaticServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
