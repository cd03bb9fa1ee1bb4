"""A real nginx running ``deploy/nginx.conf`` in front of the API's instances, for tests.

    with NginxServer(["127.0.1.1", "127.0.1.2"], port) as proxy:
        requests.get(proxy.url + "/healthz")

The instances listen on the same ``port`` at different loopback addresses, as
compose's replicas do at different container addresses; a :class:`DnsServer`
stands in for Docker's and answers ``api`` with those addresses.  The config is
:func:`local_config`: deploy/nginx.conf with only ports and paths changed
(listen on a free 127.0.0.1 port, the resolver's address, the API's port, logs
and temp files in a private directory); every other directive is the shipped
one.  nginx runs in the foreground (``daemon off``) in its own
process group, as ``nobody`` when the tests run as root, and is stopped by its
PID.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

from harness.dns_server import DnsServer
from harness.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
NGINX_CONF = ROOT / "deploy" / "nginx.conf"
UNPRIVILEGED = ("nobody", "nogroup")
INSTALL_HINT = "nginx is not installed (Debian: apt-get install nginx)"


def nginx_binary() -> str | None:
    """Path of ``nginx`` on PATH (Debian puts it in /usr/sbin), or None."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


def _replace(text: str, pattern: str, new: str, count: int | None = 1) -> str:
    """``re.sub`` that insists on matching (``count`` times, or at least once if None)."""
    result, found = re.subn(pattern, new, text, flags=re.M)
    if (count is None and found == 0) or (count is not None and found != count):
        raise ValueError(f"deploy/nginx.conf changed: {pattern!r} matched {found} times")
    return result


def local_config(
    text: str, listen_port: int, dns_port: int, api_port: int, run_dir: Path, extra: str = ""
) -> str:
    """deploy/nginx.conf's ``text`` serving 127.0.0.1:``listen_port``, asking the
    resolver on 127.0.0.1:``dns_port`` for ``api``, proxying to port ``api_port``
    of its addresses, with its logs and temp files under ``run_dir``; ``extra``
    directives are added at the top of its ``http`` block."""
    text = _replace(text, r"^(\s*resolver\s+)127\.0\.0\.11(\s)", rf"\g<1>127.0.0.1:{dns_port}\2")
    text = _replace(
        text, r"^(\s*)error_log\s+/dev/stderr(\s[^;]*)?;", rf"\1error_log {run_dir}/error.log\2;"
    )
    text = _replace(
        text,
        r"^(\s*)access_log\s+/dev/stdout(\s+\w+)?;",
        rf"\1access_log {run_dir}/access.log\2;",
    )
    text = _replace(text, r"^(\s*)listen\s+8000;", rf"\1listen 127.0.0.1:{listen_port};")
    text = _replace(text, r"http://api:8000;", f"http://api:{api_port};", count=None)
    temp_paths = "".join(
        f"\n    {kind}_temp_path {run_dir / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return _replace(text, r"^http \{", "http {" + temp_paths + (f"\n    {extra}" if extra else ""))


class NginxServer:
    """nginx with :func:`local_config` of ``conf`` on a free 127.0.0.1 port, in
    front of the instances at ``api_hosts`` (loopback addresses), all on ``api_port``."""

    def __init__(
        self,
        api_hosts: list[str],
        api_port: int,
        conf: Path = NGINX_CONF,
        extra: str = "",
        startup_timeout: float = 10,
    ) -> None:
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError(INSTALL_HINT)
        self.binary = binary
        self.port = free_port()
        self.dns = DnsServer({"api": api_hosts})
        self.dir = Path(tempfile.mkdtemp(prefix="t13-nginx-"))
        self.conf_path = self.dir / "nginx.conf"
        self.conf_path.write_text(
            local_config(conf.read_text(), self.port, self.dns.port, api_port, self.dir, extra)
        )
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def access_log(self) -> str:
        """nginx's access log so far (a line per finished request)."""
        path = self.dir / "access.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def access_entries(self) -> list[dict[str, Any]]:
        """nginx's access log so far, a JSON object a line."""
        return [json.loads(line) for line in self.access_log().splitlines()]

    def _argv(self, *extra: str) -> list[str]:
        directives = f"daemon off; pid {self.dir}/nginx.pid;"
        return [
            self.binary,
            "-p",
            str(self.dir),
            "-c",
            str(self.conf_path),
            "-g",
            directives,
            *extra,
        ]

    def _as_user(self) -> dict[str, object]:
        """Run as ``nobody`` when we are root (nginx would keep a root master otherwise)."""
        if os.geteuid() != 0:
            return {}
        user, group = UNPRIVILEGED
        for path in [self.dir, *self.dir.iterdir()]:
            shutil.chown(path, user, group)
        return {"user": user, "group": group, "extra_groups": []}

    def start(self) -> NginxServer:
        """Start nginx and wait until its own /lb-healthz answers 200."""
        self.dns.start()
        with open(self.dir / "stderr.log", "ab") as err:
            self.process = subprocess.Popen(
                self._argv(),
                cwd=self.dir,
                stdout=err,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group, id = its PID
                **self._as_user(),  # type: ignore[arg-type]
            )
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.process.poll() is not None:
                logs = self.logs()
                self.process = None
                raise RuntimeError(f"nginx exited at startup:\n{logs}")
            with contextlib.suppress(requests.RequestException):
                if requests.get(self.url + "/lb-healthz", timeout=1).status_code == 200:
                    return self
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"nginx did not start:\n{self.logs()}")
            time.sleep(0.05)

    def logs(self) -> str:
        parts = []
        for name in ("stderr.log", "error.log"):
            path = self.dir / name
            if path.exists():
                parts.append(f"--- {name} ---\n{path.read_text(errors='replace')[-4000:]}")
        return "\n".join(parts)

    def stop(self, timeout: float = 10) -> None:
        """Stop by PID: SIGTERM (fast shutdown), wait, then SIGKILL its process group."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if process.poll() is None:
            process.wait(5)

    def cleanup(self) -> None:
        self.stop()
        self.dns.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> NginxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
