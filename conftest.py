"""Doctests of the modules compiled with mypyc (see ``setup.py``).

A compiled module keeps no docstrings, and pytest refuses to collect doctests
from a ``.py`` file whose module imports as a compiled extension.  So while
the engine runs compiled, its sources' doctests are left out of this session
and run against the sources themselves, in a process of their own
(``tests/test_compiled.py``).
"""

from __future__ import annotations

from pathlib import Path

import service

ROOT = Path(__file__).resolve().parent
_COMPILED_SOURCES = {
    ROOT.joinpath(*module.split(".")).with_suffix(".py") for module in service.compiled_modules()
}


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    return True if collection_path in _COMPILED_SOURCES else None
