"""The C search as built here (``None`` where it could not be), and the mark of the
tests that need it."""

from __future__ import annotations

import pytest

from service.engine.solver import switch

native = switch.EXTENSION
needs_native = pytest.mark.skipif(native is None, reason="the C extension is not built")
