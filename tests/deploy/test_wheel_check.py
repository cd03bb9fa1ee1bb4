"""The image build's check that the solver's C extension was built (deploy/check_wheel.py,
run by deploy/runtime-venv.sh in the Dockerfile's builder) can fail: a wheel built with
no C compiler (CC=false: setup.py's optional extension is skipped) still holds the
extension's ``.c`` and ``.pyi`` -- which the former ``grep -q`` of the extension's name on the
wheel's listing matched -- and the check refuses it; a normal build passes."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.deploy.files import DEPLOY
from tests.deploy.runtime_set import build_context, build_wheel

CHECK = DEPLOY / "check_wheel.py"
pytestmark = pytest.mark.timeout(900)


def _check(wheel: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), str(wheel)], capture_output=True, text=True, timeout=60
    )


def test_check_fails_on_a_wheel_built_without_a_c_compiler(tmp_path: Path) -> None:
    wheel = build_wheel(build_context(tmp_path / "context"), tmp_path / "out", CC="false")
    names = zipfile.ZipFile(wheel).namelist()
    assert "service/engine/solver/_native.c" in names  # what the old grep matched
    assert not [n for n in names if n.endswith(".so")], "CC=false still built the extension"
    checked = _check(wheel)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "solver/_native" in checked.stderr and "was not built" in checked.stderr


def test_check_passes_on_a_normal_wheel(tmp_path: Path) -> None:
    wheel = build_wheel(build_context(tmp_path / "context"), tmp_path / "out")
    checked = _check(wheel)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "service/engine/solver/_native" in checked.stdout and ".so" in checked.stdout


def test_the_dockerfile_builds_through_the_checking_script() -> None:
    script = (DEPLOY / "runtime-venv.sh").read_text()
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "deploy/check_wheel.py" in script
    assert "RUN deploy/runtime-venv.sh project /opt/venv" in dockerfile
