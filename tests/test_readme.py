"""The README tells the truth: the make targets it names exist.

Every setting and every error code is documented in docs/ (tests/test_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_make_targets_named_in_the_readme_exist():
    makefile = (ROOT / "Makefile").read_text()
    for target in set(re.findall(r"`make ([a-z-]+)", README)):
        assert re.search(rf"^{target}:", makefile, flags=re.M), target
