"""The reference pages in docs/ tell the truth: their tables are the ones the code
generates (``make docs``), so every setting and every error code is documented."""

from __future__ import annotations

import re

import pytest

from service.api.problems import CODES
from service.env_vars import ENV_VARS
from tools.docs_tables import PAGES, ROOT, WHEN, render

CONFIGURATION = (ROOT / "docs" / "CONFIGURATION.md").read_text()
ERRORS = (ROOT / "docs" / "ERRORS.md").read_text()


@pytest.mark.parametrize("page", sorted(PAGES))
def test_committed_page_is_the_generated_one(page: str) -> None:
    committed = (ROOT / page).read_text()
    assert render(page, committed) == committed, f"{page} is stale: run `make docs`"


def test_every_environment_variable_is_in_the_configuration_table():
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", CONFIGURATION, flags=re.M))
    assert {var.name for var in ENV_VARS} <= documented


def test_every_error_code_is_in_the_errors_table():
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| (\d{3}) \|", ERRORS, flags=re.M))
    for code, (status, _title) in CODES.items():
        assert rows.get(code) == str(status), f"{code} ({status}) missing from docs/ERRORS.md"


def test_every_problem_code_says_when_it_is_answered() -> None:
    assert WHEN.keys() == CODES.keys()
