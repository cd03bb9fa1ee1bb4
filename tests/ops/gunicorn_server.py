"""A real gunicorn serving the API, for tests: started as a subprocess, stopped by PID.

    with GunicornServer({"REDIS_URL": url}) as server:
        requests.get(server.url + "/healthz")

The master runs in its own process group (its PID is the group id), so a
failed test can SIGKILL the master and its workers without touching any other
process.  Its stdout (access log) and stderr (gunicorn's and the app's logs)
go to files in a temporary directory, for tests to read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import requests

from tests.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "deploy" / "gunicorn.conf.py"


def gunicorn_binary() -> str:
    """The venv's gunicorn (next to the running interpreter), else the one on PATH."""
    beside = Path(sys.executable).parent / "gunicorn"
    if beside.exists():
        return str(beside)
    found = shutil.which("gunicorn")
    if found is None:
        raise RuntimeError("gunicorn is not installed in this environment")
    return found


class GunicornServer:
    """``gunicorn -c deploy/gunicorn.conf.py service.wsgi:app`` on a free 127.0.0.1 port."""

    def __init__(self, env: Mapping[str, str], startup_timeout: float = 30) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="t13-gunicorn-"))
        self.stdout_path = self.dir / "stdout.log"
        self.stderr_path = self.dir / "stderr.log"
        self.startup_timeout = startup_timeout
        base = {
            k: v
            for k, v in os.environ.items()
            if k
            not in ("REDIS_URL", "REDIS_CLUSTER", "WEB_CONCURRENCY", "PROMETHEUS_MULTIPROC_DIR")
        }
        self.env = {
            **base,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "WEB_CONCURRENCY": "1",
            "RATE_LIMITS": "false",
            "ALLOW_SEEDED_GAMES": "true",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def start(self) -> GunicornServer:
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(
                [gunicorn_binary(), "-c", str(CONF), "service.wsgi:app"],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group, id = its PID
            )
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited at startup:\n{self.logs()}")
            with contextlib.suppress(requests.RequestException):
                if requests.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return self
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"gunicorn did not become ready:\n{self.logs()}")
            time.sleep(0.1)

    def terminate(self) -> None:
        """SIGTERM to the master: a graceful stop (returns at once)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float) -> int:
        assert self.process is not None
        return self.process.wait(timeout)

    def stop(self, timeout: float = 15) -> int | None:
        """Stop by PID: SIGTERM, wait, then SIGKILL the master's process group."""
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        # Workers orphaned by a killed master would exit on their own; don't wait for that.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if process.poll() is None:
            process.wait(5)
        return process.returncode

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace") if self.stdout_path.exists() else ""

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def logs(self) -> str:
        return f"--- stdout ---\n{self.stdout()[-4000:]}\n--- stderr ---\n{self.stderr()[-4000:]}"

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> GunicornServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
