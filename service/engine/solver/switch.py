"""The one switch between the hand solver's C extension and its Python.

The C (``service/engine/solver/_native.c``, built by ``make install`` where
there is a compiler) is a port of the Python search of
:mod:`service.engine.solver.python_search`, state for state; the rest of the
solver (preparing a hand, turning a plan into melds, laying off) is Python
either way.  :mod:`service.engine.solver.search` asks :func:`c_search` which
one runs.  Where the C does not go -- no extension built, or more cards than it
takes (``MAX_CARDS``, twice any hand) -- the Python answers, with the same
answers (``tests/engine/test_solver_native_*.py`` holds the two to that).

The environment's ``SOLVER`` (``service/config.py``) picks one for the whole
process: ``c`` (the default: the extension where it was built) or ``python``
(:func:`use_c` with False), so that the two can be measured side by side.

>>> c_search(10**6) is None  # past what the C takes: the Python
True
"""

from __future__ import annotations

from types import ModuleType

EXTENSION: ModuleType | None
"""The C extension, or None when it was not built (the Python runs everywhere)."""
try:
    from service.engine.solver import _native as EXTENSION
except ImportError:  # installed without a C compiler
    EXTENSION = None

USE_C = True
"""Whether the C runs where it was built (``SOLVER=c``); :func:`use_c` sets it."""


def use_c(on: bool) -> None:
    """Let the C run where it was built (True), or run the Python alone (False).

    >>> use_c(False); c_search(13) is None
    True
    >>> use_c(True); (c_search(13) is None) == (EXTENSION is None)
    True
    """
    global USE_C
    USE_C = on


def c_search(size: int) -> ModuleType | None:
    """The extension for a search over ``size`` cards (and as many wilds at most),
    or None: the Python searches."""
    extension = EXTENSION
    if extension is None or not USE_C or size > extension.MAX_CARDS:
        return None
    return extension
