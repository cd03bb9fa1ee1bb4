"""Build hooks for what pyproject.toml cannot declare: the compiled parts of the engine.

* ``service/engine/_solver_native.c``, the C search of the hand solver
  (``optional=True``: without a C compiler the install still succeeds and the
  solver runs its pure-Python search, which gives the same answers).
* The modules of :data:`COMPILED` -- the engine, the game record and the helpers
  its moves call -- compiled with mypyc: the same typed Python, checked by
  mypy and turned into C extensions (a third less CPU for the Python of a
  move; ``bench/`` says how much that is over HTTP).  All or nothing: when
  mypyc is missing, its type check fails or the C does not build, none of them
  is installed and the sources run as they are.  ``T13_PURE_PYTHON=1`` at
  build time skips them.  The build writes ``service/_compiled.json``, the
  hash of every compiled source, so that a source edited after the build is
  noticed when the package is imported (see ``service/__init__.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent

COMPILED = [
    "service/engine/cards.py",
    "service/engine/rules.py",
    "service/engine/melds.py",
    "service/engine/moves.py",
    "service/engine/records.py",
    "service/engine/shuffle.py",
    "service/engine/_solver_core.py",
    "service/engine/_solver_plan.py",
    "service/engine/_solver_table.py",
    "service/engine/solver.py",
    "service/engine/state.py",
    "service/engine/codec.py",
    "service/engine/view.py",
    "service/hosting/tokens.py",
    "service/hosting/document.py",
    "service/hosting/bot_turns.py",
    "service/hosting/record.py",
    "service/hosting/game_views.py",
]
"""Compiled with mypyc.  Not ``service/engine/errors.py``: exception classes
whose instances read a class-level ``code`` stay plain Python."""

MANIFEST = "_compiled.json"
GROUP = "service"
"""mypyc's group: its shared library is the top-level module ``service__mypyc``."""
METADATA_ONLY = {"egg_info", "dist_info", "sdist", "--version", "--name"}


def _module(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def _mypyc_extensions() -> list[Extension]:
    """The mypyc extensions of :data:`COMPILED`, or none (with the reason on stderr)."""
    if os.environ.get("T13_PURE_PYTHON") == "1":
        print("T13_PURE_PYTHON=1: the engine is not compiled", file=sys.stderr)
        return []
    if METADATA_ONLY & set(sys.argv[1:]):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("mypyc not installed: the engine runs as plain Python", file=sys.stderr)
        return []
    try:
        extensions: list[Extension] = mypycify(COMPILED, opt_level="3", group_name=GROUP)
    except (Exception, SystemExit) as exc:  # a type error makes mypyc exit
        print(f"mypyc failed ({exc!r}): the engine runs as plain Python", file=sys.stderr)
        return []
    return extensions


class BuildExt(build_ext):
    """Builds the optional extensions one by one, then the mypyc ones all or none."""

    def run(self) -> None:
        # setuptools builds "in place" into build/ and copies the results over
        # after, so remember where they end up: the manifest goes beside them
        self._next_to_sources = bool(self.inplace or getattr(self, "editable_mode", False))
        super().run()

    def build_extensions(self) -> None:
        every = list(self.extensions)
        compiled = [e for e in every if getattr(e, "_t13_mypyc", False)]
        self.extensions = [e for e in every if e not in compiled]
        super().build_extensions()
        self.extensions = compiled
        try:
            if compiled:
                super().build_extensions()
                self._write_manifest()
                return
        except Exception as exc:  # a compiler or linker error: no half-compiled engine
            print(f"compiling the engine failed ({exc!r}): plain Python it is", file=sys.stderr)
        finally:
            self.extensions = every
        self._remove_compiled()

    def _remove_compiled(self) -> None:
        """No compiled engine: none left over from an earlier build either."""
        for name in [*map(_module, COMPILED), GROUP + "__mypyc"]:
            Path(self.get_ext_fullpath(name)).unlink(missing_ok=True)
        self._manifest().unlink(missing_ok=True)

    def _manifest(self) -> Path:
        if getattr(self, "_next_to_sources", False):
            return ROOT / "service" / MANIFEST
        return Path(self.get_ext_fullpath("service.hosting.record")).parents[1] / MANIFEST

    def _write_manifest(self) -> None:
        target = self._manifest()
        digests = {
            _module(path): hashlib.sha256((ROOT / path).read_bytes()).hexdigest()
            for path in COMPILED
        }
        target.write_text(json.dumps({"modules": digests}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":  # as setuptools runs it (tests import COMPILED from here)
    mypyc_extensions = _mypyc_extensions()
    for extension in mypyc_extensions:
        extension._t13_mypyc = True  # type: ignore[attr-defined]
    setup(
        ext_modules=[
            Extension(
                "service.engine._solver_native",
                ["service/engine/_solver_native.c"],
                optional=True,
            ),
            *mypyc_extensions,
        ],
        cmdclass={"build_ext": BuildExt},
    )
