"""A webhook delivery worker (``python -m service.webhooks``) as a process of its own,
for tests and benchmarks: started on a Redis with the given settings, stopped by PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class WorkerProcess:
    """``python -m service.webhooks`` on ``redis_url``, its output appended to ``log``."""

    def __init__(self, redis_url: str, env: Mapping[str, str], log: Path) -> None:
        full = {**os.environ, **env, "REDIS_URL": redis_url}
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.webhooks"],
            cwd=ROOT,
            env=full,
            stdout=self._log,
            stderr=self._log,
            stdin=subprocess.DEVNULL,
        )

    def kill(self) -> None:
        """SIGKILL: no attempt under way is finished or recorded."""
        self._end(signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM: the attempts under way finish, then the worker exits."""
        self._end(signal.SIGTERM)

    def _end(self, signum: int) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signum)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self._log.close()
