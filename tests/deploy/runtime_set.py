"""The runtime set as the image installs it, made on this machine for the tests.

:func:`build_context` copies what ``.dockerignore`` lets into the image's build
(``pyproject.toml``, ``setup.py``, ``service/``, ``requirements/runtime.txt``, the
scripts in ``deploy/`` the Dockerfile runs), without a developer tree's bytecode,
builds or ``.so`` files; :func:`runtime_venv` runs ``deploy/runtime-venv.sh`` on it,
the script the Dockerfile runs: the locked runtime set only (no dev extras),
then the project's wheel, checked, with ``--no-deps``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.deploy.files import DOCKERIGNORE, REPO

RUNTIME_LOCK = REPO / "requirements" / "runtime.txt"
DEV_LOCK = REPO / "requirements" / "dev.txt"
_NOT_COPIED = ("__pycache__", "*.py[cod]", "*.so", "*.egg-info", "build", ".*_cache")
_NOT_INHERITED = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "REDIS_URL", "REDIS_CLUSTER")


def admitted() -> list[str]:
    """The paths ``.dockerignore`` (an allow-list) admits into the build context."""
    lines = [line.strip() for line in DOCKERIGNORE.read_text().splitlines()]
    return [line[1:].rstrip("/") for line in lines if line.startswith("!")]


def build_context(dest: Path) -> Path:
    """A copy of the image's build context at ``dest``."""
    for name in admitted():
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns(*_NOT_COPIED))
        elif source.exists():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would point a child at the dev venv,
    the repository's sources or another Redis."""
    env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != Path(sys.executable).parent
    )
    return {**env, **extra}


def run(argv: list[str], cwd: Path, env: Mapping[str, str], timeout: float) -> str:
    """Run ``argv``; its output, or an AssertionError that shows it."""
    done = subprocess.run(
        argv, cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"{' '.join(argv)} exited {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    return done.stdout


def runtime_venv(context: Path, venv: Path, timeout: float = 900) -> Path:
    """``deploy/runtime-venv.sh deps`` then ``project``, as in the Dockerfile's builder."""
    env = clean_env(PYTHON=sys.executable)
    script = str(context / "deploy" / "runtime-venv.sh")
    run([script, "deps", str(venv)], context, env, timeout)
    run([script, "project", str(venv)], context, env, timeout)
    return venv


def build_wheel(context: Path, out: Path, **env: str) -> Path:
    """The project's wheel built from ``context`` as the image builds it (pip wheel
    --no-deps), with ``env`` added (``CC=false``: no C compiler)."""
    run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(out), "."],
        context,
        clean_env(**env),
        600,
    )
    (wheel,) = out.glob("three_thirteen-*.whl")
    return wheel


def pins(lock: Path) -> dict[str, str]:
    """``{name: version}`` of a pip-compile lock file (names normalized)."""
    found = re.findall(r"^([A-Za-z0-9._-]+)==([^\s\\;]+)", lock.read_text(), re.MULTILINE)
    return {normalize(name): version for name, version in found}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
