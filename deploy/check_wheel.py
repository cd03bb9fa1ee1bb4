"""Exit non-zero unless the wheel holds the solver's compiled extension.

The extension is optional for pip (setup.py): a build without a C compiler or
Python's headers still succeeds, with only the pure-Python solver.  The image
must have it, so its build runs this on the wheel it made:

    python deploy/check_wheel.py dist/three_thirteen-*.whl

A ``.c`` source or a ``.pyi`` stub of the same name does not count.
"""

from __future__ import annotations

import fnmatch
import sys
import zipfile

EXTENSION = "service/engine/solver/_native*.so"


def compiled_extensions(wheel: str) -> list[str]:
    """The wheel's members matching :data:`EXTENSION`."""
    with zipfile.ZipFile(wheel) as archive:
        return [name for name in archive.namelist() if fnmatch.fnmatch(name, EXTENSION)]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: check_wheel.py WHEEL", file=sys.stderr)
        return 2
    found = compiled_extensions(argv[0])
    if not found:
        print(
            f"{argv[0]} has no {EXTENSION}: the solver's C extension was not built "
            "(a C compiler and Python's headers are needed)",
            file=sys.stderr,
        )
        return 1
    print(f"{argv[0]}: {', '.join(found)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
