"""What the wheel ships: the service package and nothing of the developer tools.

``tools/`` (``make docs``, ``make openapi``) sits beside ``service/`` in the
repository; setuptools' package discovery (``include = ["service*"]``) must leave it
out even when it is in the tree being built, and ``service/`` keeps at most seven
modules at its root."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from tests.deploy.files import REPO
from tests.deploy.runtime_set import build_context, build_wheel

pytestmark = pytest.mark.timeout(900)

ROOT_MODULES = sorted(p.name for p in (REPO / "service").glob("*.py"))
"""The service package's own top-level modules: the wheel holds these and no other
(a developer's tool in the tree must not be packaged beside them)."""


def test_the_wheel_holds_no_developer_tools(tmp_path: Path) -> None:
    context = build_context(tmp_path / "context")
    shutil.copytree(REPO / "tools", context / "tools")  # as in a developer's tree
    wheel = build_wheel(context, tmp_path / "out", CC="false")  # no C: quicker, same files
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("tools/")]
    root = sorted(
        n.removeprefix("service/")
        for n in names
        if n.startswith("service/") and n.count("/") == 1 and n.endswith(".py")
    )
    assert "openapi.py" not in root and "docs_tables.py" not in root
    assert root == ROOT_MODULES
    assert "service/hosting/write_loop.py" in names  # the package itself is there
