"""Processes of the soak: gunicorn instances of the service and a private Redis.

``Gunicorn`` runs ``service.wsgi:app`` on a free loopback port (seeded games allowed,
rate limits off); :func:`cluster` starts a ``redis-server`` (AOF on) and several
instances on it.  Everything is stopped by its own PID.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.redis_server import RedisServer, free_port

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent


class Gunicorn:
    """One gunicorn instance of the service, stopped by its PID."""

    def __init__(self, redis_url: str, log: Path, *, workers: int = 2, **env: str) -> None:
        self.port = free_port()
        self.log = log
        environ = {
            **os.environ,
            "REDIS_URL": redis_url,
            "ALLOW_SEEDED_GAMES": "true",
            "RATE_LIMITS": "false",
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "WEB_CONCURRENCY": str(workers),
            "LOG_LEVEL": "WARNING",
            **env,
        }
        environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        argv = [
            str(VENV_BIN / "gunicorn"),
            "-c",
            str(ROOT / "deploy" / "gunicorn.conf.py"),
            "--access-logfile",
            "/dev/null",
            "service.wsgi:app",
        ]
        self._log_file = log.open("ab")
        self.process = subprocess.Popen(
            argv, cwd=ROOT, env=environ, stdout=self._log_file, stderr=subprocess.STDOUT
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float = 30) -> Gunicorn:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited: {self.log.read_text()[-2000:]}")
            try:
                if requests.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"gunicorn not ready: {self.log.read_text()[-2000:]}")

    def workers(self) -> list[int]:
        """PIDs of the master's worker processes."""
        pid = self.process.pid
        try:
            text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def stop(self) -> None:
        process = self.process
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._log_file.close()


@contextmanager
def cluster(work: Path, instances: int = 2, workers: int = 2) -> Iterator[tuple[str, list[str]]]:
    """A private Redis (AOF) and ``instances`` gunicorn instances on it; all stopped by PID."""
    server = RedisServer(extra_args=("--appendonly", "yes", "--appendfsync", "everysec"))
    procs: list[Gunicorn] = []
    try:
        server.start()
        for i in range(instances):
            procs.append(Gunicorn(server.url, work / f"gunicorn-{i}.log", workers=workers))
        for proc in procs:
            proc.wait_ready()
        yield server.url, [proc.url for proc in procs]
    finally:
        for proc in procs:
            proc.stop()
        server.cleanup()
