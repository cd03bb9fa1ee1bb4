"""The engine compiled with mypyc (``setup.py``), and what guards it.

The compiled modules run the same Python as their sources; the whole suite
tests them as they are installed.  This file checks that the build really
compiled them where it can, that their doctests pass (on the sources: a
compiled module keeps no docstrings), and that a source edited after the
build is never shadowed by stale compiled code.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import service

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from setup import COMPILED  # noqa: E402  (the build's own list)


def _can_compile() -> bool:
    include = sysconfig.get_paths().get("include")
    if shutil.which("cc") is None or not include or not Path(include, "Python.h").exists():
        return False
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return False
    return os.environ.get("T13_PURE_PYTHON") != "1"


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(not _can_compile(), reason="no C compiler, Python headers or mypyc here")
def test_the_engine_is_compiled_where_it_can_be() -> None:
    """`make install` compiles it; a silent fall back to the sources would cost every move."""
    assert service.compiled_modules() == sorted(
        path.removesuffix(".py").replace("/", ".") for path in COMPILED
    )


def test_doctests_of_the_compiled_modules_pass_on_their_sources() -> None:
    paths = [str(ROOT / path) for path in COMPILED]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths],
        cwd=ROOT,
        env={**os.environ, "T13_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout


def test_pure_python_on_request() -> None:
    run = _python(
        "import service, service.engine.cards as c; print(service.compiled_modules(), c.__file__)",
        T13_PURE_PYTHON="1",
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["[]", str(ROOT / "service" / "engine" / "cards.py")]


@pytest.mark.skipif(not service.compiled_modules(), reason="the engine runs as plain Python here")
def test_a_source_edited_after_the_build_runs_instead_of_its_stale_build(tmp_path: Path) -> None:
    """A copy of the package whose view.py changed: every compiled module then
    loads from its source (they share native classes), with a warning."""
    copy = tmp_path / "tree"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "service", copy / "service", ignore=skip)
    for lib in ROOT.glob("service__mypyc*"):
        shutil.copy(lib, copy)
    with open(copy / "service" / "engine" / "view.py", "a") as source:
        source.write("\n# edited after the build\n")
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import service, service.engine.view as v, service.engine.cards as c; print("
            "service.compiled_modules(), v.__file__.endswith('.py'), c.__file__.endswith('.py'))",
        ],
        cwd=copy,
        env={**os.environ, "PYTHONPATH": str(copy)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["[]", "True", "True"]
    assert "compiled modules older than their sources (service.engine.view)" in run.stderr
