"""A real gunicorn serving an app, for tests and benchmarks: a subprocess stopped by PID.

    with GunicornServer({"REDIS_URL": url}) as server:
        requests.get(server.url + "/healthz")

It runs ``gunicorn -c deploy/gunicorn.conf.py APP`` (the service's own settings;
``service.wsgi:app`` unless told otherwise) on a free 127.0.0.1 port, with one
worker, seeded games allowed, and rate limits and the lobby's limits per address off
unless ``env`` says otherwise (and games of bots alone played at full speed).
The master runs in its own process group (its PID is the group id), so a failed
test can SIGKILL the master and its workers without touching any other process.
Its stdout (access log) and stderr (gunicorn's and the app's logs) go to files,
in a temporary directory or in ``log_dir``, for tests to read.

On a Redis (``REDIS_URL`` in ``env``) a bot worker (``python -m service.botplay``)
runs beside it, as in production, from start to stop (``bots=False``: none): no
request plays a bot's turn or a turn timer's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import requests

from harness.ports import free_port
from harness.proc_stats import child_pids, cpu_seconds
from harness.webhook_worker import WorkerProcess

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "deploy" / "gunicorn.conf.py"
SERVICE_APP = "service.wsgi:app"
_NOT_INHERITED = (
    "REDIS_URL",
    "REDIS_CLUSTER",
    "REDIS_SENTINELS",
    "REDIS_SENTINEL_MASTER",
    "REDIS_WAIT_REPLICAS",
    "REDIS_WAIT_AOF",
    "WEB_CONCURRENCY",
    "PROMETHEUS_MULTIPROC_DIR",
)


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
    """gunicorn with ``deploy/gunicorn.conf.py`` on a free 127.0.0.1 port.

    ``env`` is added to the environment (``WEB_CONCURRENCY`` sets the workers);
    ``app`` is the WSGI app, ``ready_path`` what must answer 200 once it is up;
    ``access_log=False`` formats the access log as in production but sends it
    to ``/dev/null``; ``name`` prefixes the log files in ``log_dir``; ``tree``
    is the checkout whose ``deploy/gunicorn.conf.py`` and ``service`` are served
    (this one unless told otherwise: another revision, for a side-by-side run);
    ``host`` and ``port`` (a free one by default) are where it listens;
    ``binary`` is the gunicorn to run (another venv's: the runtime set's);
    ``bots`` runs a bot worker beside it when it has a Redis (:attr:`bot_worker`).
    """

    def __init__(
        self,
        env: Mapping[str, str],
        *,
        app: str = SERVICE_APP,
        ready_path: str = "/readyz",
        access_log: bool = True,
        log_dir: Path | None = None,
        name: str = "gunicorn",
        startup_timeout: float = 30,
        tree: Path = ROOT,
        host: str = "127.0.0.1",
        port: int | None = None,
        binary: str | None = None,
        bots: bool = True,
    ) -> None:
        self.binary = binary
        self.bots = bots
        self.bot_worker: WorkerProcess | None = None
        self.host = host
        self.port = port or free_port(host)
        self.tree = tree
        self.app = app
        self.ready_path = ready_path
        self.access_log = access_log
        self._own_dir = log_dir is None
        self.dir = Path(tempfile.mkdtemp(prefix="t13-gunicorn-")) if log_dir is None else log_dir
        self.stdout_path = self.dir / f"{name}.stdout.log"
        self.stderr_path = self.dir / f"{name}.stderr.log"
        self.startup_timeout = startup_timeout
        base = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
        self.env = {
            **base,
            "HOST": host,
            "PORT": str(self.port),
            "WEB_CONCURRENCY": "1",
            "RATE_LIMITS": "false",
            "LOBBY_SEATS_PER_ADDRESS": "0",
            "LOBBY_LISTED_PER_ADDRESS": "0",
            "ALLOW_SEEDED_GAMES": "true",
            "BOT_IDLE_MOVE_SECONDS": "0",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def start(self) -> GunicornServer:
        """Start the master (and its bot worker) and wait until ``ready_path``
        answers 200."""
        self.start_bot_worker()
        argv = [self.binary or gunicorn_binary(), "-c", str(self.tree / CONF.relative_to(ROOT))]
        if not self.access_log:
            argv += ["--access-logfile", "/dev/null"]
        with open(self.stdout_path, "ab") as out, open(self.stderr_path, "ab") as err:
            self.process = subprocess.Popen(
                [*argv, self.app],
                cwd=self.tree,
                env=self.env,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group, id = its PID
            )
        try:
            return self.wait_ready(self.startup_timeout)
        except RuntimeError:
            self.stop()
            raise

    def start_bot_worker(self) -> None:
        """Start the bot worker on the server's Redis, unless one runs already, it
        has none, ``bots`` is off or its tree has no bot worker."""
        redis_url = self.env.get("REDIS_URL")
        if not self.bots or not redis_url or not (self.tree / "service" / "botplay").is_dir():
            return
        if self.bot_worker is not None and self.bot_worker.running():
            return
        python = sys.executable if self.binary is None else str(Path(self.binary).parent / "python")
        self.bot_worker = WorkerProcess(
            redis_url,
            {k: v for k, v in self.env.items() if k not in ("HOST", "PORT")},
            self.dir / "bots.log",
            module="service.botplay",
            tree=self.tree,
            python=python,
        )

    def stop_bot_worker(self) -> None:
        """SIGTERM the bot worker (SIGKILL if it does not stop), if one runs."""
        worker, self.bot_worker = self.bot_worker, None
        if worker is not None:
            worker.stop()

    def wait_ready(self, timeout: float = 30) -> GunicornServer:
        """Wait until ``ready_path`` answers 200 (after a start, or workers killed)."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited at startup:\n{self.logs()}")
            with contextlib.suppress(requests.RequestException):
                if requests.get(self.url + self.ready_path, timeout=1).status_code == 200:
                    return self
            if time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not become ready:\n{self.logs()}")
            time.sleep(0.1)

    def workers(self) -> list[int]:
        """PIDs of the master's worker processes."""
        return child_pids(self.process.pid) if self.process else []

    def cpu_seconds(self) -> float:
        """CPU time of the master and its workers, live or reaped."""
        return cpu_seconds(self.process.pid) if self.process else 0.0

    def signal_all(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the master and its workers (its process group): SIGSTOP
        freezes the instance, SIGKILL is a crash (then :meth:`wait`, or :meth:`start`
        it again: same host and port)."""
        assert self.process is not None
        os.killpg(self.process.pid, sig)
        if sig == signal.SIGKILL:
            self.process.wait(10)
            self._wait_closed(10)

    def _wait_closed(self, timeout: float) -> None:
        """Until the instance's port refuses connections.  Its workers hold the
        listening socket too, and a loaded machine may take a moment to end them
        after the master: until then a connection is accepted into the backlog and
        reset once a request went out, which nginx cannot pass on for a POST."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection((self.host, self.port), timeout=1):
                    pass
            except ConnectionRefusedError:
                return
            except OSError:
                pass
            assert time.monotonic() < deadline, f"port {self.port} still open after SIGKILL"
            time.sleep(0.05)

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def terminate(self) -> None:
        """SIGTERM to the master: a graceful stop (returns at once)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float) -> int:
        assert self.process is not None
        return self.process.wait(timeout)

    def stop(self, timeout: float = 15) -> int | None:
        """Stop by PID: SIGTERM, wait, then SIGKILL the master's process group; and
        its bot worker."""
        self.stop_bot_worker()
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
        """Stop, and delete the log directory if it is this server's own."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> GunicornServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
