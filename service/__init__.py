"""Three Thirteen game host.

The engine and the game record may be compiled with mypyc (``setup.py``).
When they are, ``_compiled.json`` here holds the hash of every compiled
source.  Before any of them is imported, this checks those hashes: if a
source changed since the build (an edit, a checkout), or ``T13_PURE_PYTHON=1``
is set, every compiled module is loaded from its source instead -- all of
them, as compiled modules share their native classes -- with a warning for a
stale build, so that stale compiled code never runs.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

_HERE = Path(__file__).resolve().parent


class _FromSource:
    """A meta path finder loading the compiled modules from their ``.py`` files."""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = sources

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        source = self.sources.get(name)
        if source is None:
            return None
        return importlib.util.spec_from_file_location(name, source)


def _source_of(module: str) -> Path:
    return _HERE.parent.joinpath(*module.split(".")).with_suffix(".py")


def compiled_modules() -> list[str]:
    """The modules this process runs compiled (empty: all plain Python)."""
    manifest = _HERE / "_compiled.json"
    if not manifest.exists() or any(isinstance(f, _FromSource) for f in sys.meta_path):
        return []
    found = []
    for module in sorted(json.loads(manifest.read_text())["modules"]):
        spec = importlib.util.find_spec(module)
        if spec is not None and (spec.origin or "").endswith(_EXTENSIONS):
            found.append(module)
    return found


_EXTENSIONS = tuple(importlib.machinery.EXTENSION_SUFFIXES)


def _load_sources_if_stale() -> None:
    manifest = _HERE / "_compiled.json"
    if not manifest.exists():
        return
    digests: dict[str, str] = json.loads(manifest.read_text())["modules"]
    sources = {module: _source_of(module) for module in digests}
    stale = [
        module
        for module, digest in digests.items()
        if not sources[module].exists()
        or hashlib.sha256(sources[module].read_bytes()).hexdigest() != digest
    ]
    if stale:
        warnings.warn(
            f"compiled modules older than their sources ({', '.join(stale)}): running the "
            "sources instead; `make install` compiles them again",
            RuntimeWarning,
            stacklevel=2,
        )
    if stale or os.environ.get("T13_PURE_PYTHON") == "1":
        sys.meta_path.insert(0, _FromSource(sources))


_load_sources_if_stale()
