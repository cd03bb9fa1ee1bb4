"""A worker as a process of its own -- the webhook delivery worker (``python -m
service.webhooks``), or the bot worker (``python -m service.botplay``) -- for tests and
benchmarks: started on a Redis with the given settings, stopped by PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class WorkerProcess:
    """``python -m <module>`` on ``redis_url``, its output appended to ``log``: ``tree``
    is the checkout it runs (this one by default), ``python`` the interpreter."""

    def __init__(
        self,
        redis_url: str,
        env: Mapping[str, str],
        log: Path,
        *,
        module: str = "service.webhooks",
        tree: Path = ROOT,
        python: str = sys.executable,
    ) -> None:
        full = {**os.environ, **env, "REDIS_URL": redis_url}
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [python, "-m", module],
            cwd=tree,
            env=full,
            stdout=self._log,
            stderr=self._log,
            stdin=subprocess.DEVNULL,
        )

    def running(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: no attempt under way is finished or recorded."""
        self._end(signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM: the work under way finishes, then the worker exits."""
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
