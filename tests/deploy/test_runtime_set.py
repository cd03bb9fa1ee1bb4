"""What the image installs, tried as the image runs it: the wheel built from the image's
build context, installed with the locked runtime set only (requirements/runtime.txt, no
dev extras) into a fresh venv by deploy/runtime-venv.sh (the Dockerfile's script).

Every module of the installed package imports (a module importing an undeclared
dependency fails here: urllib3 did, found only through the dev venv's requests);
gunicorn from that venv with deploy/gunicorn.conf.py serves a whole game on a
throwaway redis-server; the webhooks worker's entry point starts and stops on SIGTERM.
Nothing from the repository's tree is importable there: the app directory holds only
the gunicorn config, as the image's /app does.

The venv is built once per module (pip's cache makes a rebuild quick; the first run
on a fresh machine downloads the runtime set from PyPI).
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from harness.gunicorn_server import GunicornServer
from harness.live_game import LiveGame
from harness.redis_server import RedisServer, redis_server_binary
from tests.deploy.files import GUNICORN_CONF
from tests.deploy.runtime_set import (
    RUNTIME_LOCK,
    build_context,
    clean_env,
    normalize,
    pins,
    run,
    runtime_venv,
)

pytestmark = pytest.mark.timeout(1200)

_IMPORT_ALL = """
import importlib, importlib.metadata, json, pkgutil, sys
import service
modules = [m.name for m in pkgutil.walk_packages(service.__path__, "service.")]
failed = {}
for name in modules:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({
    "package": service.__file__,
    "prefix": sys.prefix,
    "modules": modules,
    "failed": failed,
    "installed": {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()},
}))
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("runtime-set")
    context = build_context(root / "context")
    yield runtime_venv(context, root / "venv")
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Like the image's /app: deploy/gunicorn.conf.py and nothing else."""
    root = tmp_path_factory.mktemp("runtime-app")
    (root / "deploy").mkdir()
    shutil.copy2(GUNICORN_CONF, root / "deploy" / "gunicorn.conf.py")
    return root


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    if redis_server_binary() is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    with RedisServer() as server:
        yield server.url


@pytest.fixture(scope="module")
def imported(venv: Path, app_dir: Path) -> dict[str, Any]:
    """What importing every module of the installed package in the venv found."""
    python = str(venv / "bin" / "python")
    return json.loads(run([python, "-c", _IMPORT_ALL], app_dir, clean_env(), 300))  # type: ignore[no-any-return]


def test_installed_set_is_the_runtime_lock(imported: dict[str, Any]) -> None:
    out = imported
    installed = {normalize(name): version for name, version in out["installed"].items()}
    assert installed.pop("three-thirteen") == "0.1.0"
    assert installed == pins(RUNTIME_LOCK), "the venv holds other than requirements/runtime.txt"


def test_every_module_of_the_installed_package_imports(imported: dict[str, Any]) -> None:
    out = imported
    assert out["package"].startswith(out["prefix"]), "service was not imported from the venv"
    assert "service.engine.solver._native" in out["modules"], "the wheel lacks the C extension"
    assert "service.webhooks.sender" in out["modules"]
    assert out["failed"] == {}, "modules that do not import with the runtime set only"


def test_gunicorn_from_the_runtime_set_serves_a_game(
    venv: Path, app_dir: Path, redis_url: str
) -> None:
    env = {**clean_env(), "REDIS_URL": redis_url, "WEB_CONCURRENCY": "2"}
    with GunicornServer(
        env, tree=app_dir, binary=str(venv / "bin" / "gunicorn"), startup_timeout=180
    ) as server:
        assert requests.get(server.url + "/healthz", timeout=10).status_code == 200
        game = LiveGame.create(server.url, players=2)
        first = game.public()
        moves = 0
        while game.step():
            moves += 1
            assert moves < 20_000, "the game did not end"
        final = game.public()
        assert final["status"] == "finished"
        assert final["version"] > first["version"]
        kinds = [event["type"] for event in game.events()]
        assert "drew" in kinds and "discarded" in kinds
        assert len(kinds) > moves  # an event a move, and the game's and rounds' own
        assert kinds.count("round_started") == kinds.count("round_ended") >= 1
        assert kinds[-1] == "game_finished", kinds[-5:]
        workers = server.workers()
        assert len(workers) == 2
        for pid in workers:  # forks of the master: the runtime venv's gunicorn
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
            assert any(part.startswith(str(venv)) for part in cmdline[:2]), cmdline


@pytest.mark.parametrize("command", ["three-thirteen-webhooks", "three-thirteen-bots"])
def test_a_worker_starts_and_stops_on_sigterm(
    venv: Path, app_dir: Path, redis_url: str, tmp_path: Path, command: str
) -> None:
    log = tmp_path / f"{command}.log"
    env = {**clean_env(), "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(venv / "bin" / command)],
            cwd=app_dir,
            env=env,
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 120
        while "started" not in log.read_text(errors="replace"):
            assert process.poll() is None, f"the worker exited:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"the worker did not start:\n{log.read_text()}"
            time.sleep(0.2)
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        assert process.wait(120) == 0, log.read_text()
        assert "stopping" in log.read_text(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
