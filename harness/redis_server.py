"""Throwaway ``redis-server`` processes for tests and benchmarks.

:class:`RedisServer` starts a private server on a free 127.0.0.1 port with its
own temporary directory (no snapshots, no AOF unless asked), and stops it by its
PID only (never by name); it never flushes anything, and no other Redis is
touched.  It can be killed with SIGKILL and started again on the same port and
directory, so fault tests can check what survives (e.g. with
``extra_args=("--appendonly", "yes")``).

    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import redis

from harness.ports import free_port
from harness.proc_stats import cpu_seconds

INSTALL_HINT = "install redis-server (Debian: apt-get install redis-server) or set TEST_REDIS_URL"


def redis_server_binary() -> str | None:
    """Path of ``redis-server`` on PATH, or None."""
    return shutil.which("redis-server")


class RedisServer:
    """One private ``redis-server`` process (no RDB snapshots, no AOF unless asked)."""

    def __init__(
        self,
        port: int | None = None,
        extra_args: Sequence[str] = (),
        startup_timeout: float = 10,
        binary: str | None = None,
    ) -> None:
        binary = binary or redis_server_binary()
        if binary is None:
            raise RuntimeError(INSTALL_HINT)
        self.binary = binary
        self._auto_port = port is None
        self.port = port or free_port()
        self.extra_args = tuple(extra_args)
        self.startup_timeout = startup_timeout
        self.dir = Path(tempfile.mkdtemp(prefix="t13-redis-"))
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def cpu_seconds(self) -> float:
        """CPU time the server has used so far."""
        return cpu_seconds(self.process.pid) if self.process else 0.0

    def client(self, **kwargs: object) -> redis.Redis:
        """A plain client of this server (short timeouts)."""
        kwargs.setdefault("socket_timeout", 2)
        kwargs.setdefault("socket_connect_timeout", 2)
        return redis.Redis.from_url(self.url, **kwargs)  # type: ignore[arg-type]

    def start(self, answering: bool = True) -> RedisServer:
        """Start the server (again: same port and directory) and wait until it answers PING
        (after loading its data: it answers LOADING meanwhile); ``answering=False``
        returns as soon as the process is started (a test of the loading time).

        A port chosen here that another process took meanwhile is replaced (first start only).
        """
        for attempt in range(3):
            try:
                return self._start(answering)
            except RuntimeError as exc:
                if not (self._auto_port and "already in use" in str(exc)) or attempt == 2:
                    raise
                self.port = free_port()
        raise AssertionError("unreachable")

    def _start(self, answering: bool) -> RedisServer:
        if self.process is not None and self.process.poll() is None:
            return self
        self.process = subprocess.Popen(
            self.arguments(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.dir
        )
        if not answering:
            return self
        deadline = time.monotonic() + self.startup_timeout
        probe = self.client(socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            while True:
                if self.process.poll() is not None:
                    err = self.process.stderr.read().decode() if self.process.stderr else ""
                    self.process = None
                    raise RuntimeError(f"redis-server exited at startup: {err}{self.log_tail()}")
                try:
                    if probe.ping():
                        self._auto_port = False  # restarts keep the port
                        return self
                except (redis.ConnectionError, redis.TimeoutError):  # LOADING among them
                    pass
                except redis.ResponseError:
                    pass
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"redis-server on port {self.port} did not answer PING")
                time.sleep(0.05)
        finally:
            probe.close()

    def arguments(self) -> list[str]:
        """The command line of the server."""
        return [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.dir),
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--protected-mode", "yes",
            "--logfile", str(self.dir / "redis.log"),
            *self.extra_args,
        ]  # fmt: skip

    def log_tail(self, lines: int = 20) -> str:
        path = self.dir / "redis.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, timeout: float = 10) -> None:
        """Stop the server by its PID: SIGTERM, wait, then SIGKILL."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr:
            process.stderr.close()

    def kill(self) -> None:
        """SIGKILL the server (a crash: nothing is flushed); start() brings it back."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait()
        if process.stderr:
            process.stderr.close()

    def pause(self) -> None:
        """SIGSTOP the server: it neither answers nor replicates until :meth:`resume`."""
        if self.process is not None:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT a server :meth:`pause` d."""
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)

    def snapshot(self) -> Path:
        """Save the data set now (``SAVE``) and keep a copy of the RDB file aside:
        what :meth:`roll_back` brings back."""
        client = self.client(socket_timeout=10)
        try:
            client.save()
        finally:
            client.close()
        kept = self.dir / f"snapshot-{time.monotonic_ns()}.rdb"
        shutil.copyfile(self.dir / "dump.rdb", kept)
        return kept

    def roll_back(self, snapshot: Path) -> RedisServer:
        """Come back with less than was acknowledged: SIGKILL the server, put the
        older ``snapshot`` in place of its data, start it again (a new run_id)."""
        self.kill()
        shutil.copyfile(snapshot, self.dir / "dump.rdb")
        return self.start()

    def restart(self) -> RedisServer:
        self.stop()
        return self.start()

    def cleanup(self) -> None:
        """Stop the server and delete its directory."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
