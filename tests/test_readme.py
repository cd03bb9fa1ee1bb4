"""The README tells the truth: every setting and every error code is documented."""

from __future__ import annotations

import re
from pathlib import Path

from service.api.problems import CODES
from service.config import ENV_VARS

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_every_environment_variable_is_in_the_readme_table():
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", README, flags=re.M))
    assert {var.name for var in ENV_VARS} <= documented


def test_every_error_code_is_in_the_readme_table():
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| (\d{3}) \|", README, flags=re.M))
    for code, (status, _title) in CODES.items():
        assert rows.get(code) == str(status), f"{code} ({status}) missing from the README"


def test_make_targets_named_in_the_readme_exist():
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    for target in set(re.findall(r"`make ([a-z-]+)", README)):
        assert re.search(rf"^{target}:", makefile, flags=re.M), target
