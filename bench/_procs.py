"""Child processes of the HTTP benchmark: a throwaway ``redis-server`` and gunicorn.

Each is started on a free loopback port, its stderr logged under the work
directory, and stopped by its own PID (and process group); ``Target`` bundles a
server under load with the Redis behind it and the games the load cycles over.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from tests.redis_server import free_port

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def wait_http(port: int, path: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                conn.close()
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"nothing answered 200 on 127.0.0.1:{port}{path} within {timeout}s")


class Proc:
    """A child process stopped by its own PID (and its process group) on exit."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        self._log_file = open(log, "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,  # gunicorn's access log: formatted, then dropped
            stderr=self._log_file,
            start_new_session=True,
        )

    def cpu_seconds(self) -> float:
        """CPU time of this process and its children, live or reaped (gunicorn workers)."""
        tick = os.sysconf("SC_CLK_TCK")
        pids = [self.proc.pid]
        with contextlib.suppress(OSError):
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
            pids += [int(c) for c in children.split()]
        total = 0
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime
            if pid == self.proc.pid:
                total += int(fields[13]) + int(fields[14])  # reaped children
        return total / tick

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self._log_file.close()


@dataclass
class Target:
    """A server under load: its port, its gunicorn, the Redis behind it and the
    games the load cycles over (as stored in that Redis)."""

    name: str
    port: int
    server: Proc
    redis: Proc
    client: redis.Redis
    games: list[dict[str, Any]]


def start_redis(work: Path, name: str) -> tuple[Proc, int]:
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("redis-server not found on PATH (Debian: apt-get install -y redis-server)")
    port = free_port()
    proc = Proc(
        name,
        [
            exe,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(work),
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
        ],
        dict(os.environ),
        work / f"{name}.log",
    )
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or proc.proc.poll() is not None:
                raise RuntimeError(f"redis-server did not start; see {proc.log}") from None
            time.sleep(0.05)
    return proc, port


def start_gunicorn(
    name: str,
    app: str,
    port: int,
    redis_port: int,
    args: argparse.Namespace,
    work: Path,
    extra_env: dict[str, str] | None = None,
) -> Proc:
    """gunicorn serving ``app`` with the benchmark's settings, plus ``extra_env``
    (a variant of :mod:`bench.side_by_side`)."""
    env = dict(os.environ)
    env.update(
        HOST="127.0.0.1",
        PORT=str(port),
        WEB_CONCURRENCY=str(args.workers),
        REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",  # also keeps the ceiling at N workers
        RATE_LIMITS="false",
    )
    env.update(extra_env or {})
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    argv = [str(VENV_BIN / "gunicorn"), "-c", str(ROOT / "deploy" / "gunicorn.conf.py"), app]
    proc = Proc(name, argv, env, work / f"{name}.log")
    try:
        wait_http(port, "/healthz")
    except RuntimeError:
        proc.stop()
        raise RuntimeError(f"{name} did not start; see {proc.log}") from None
    return proc
