"""Every YAML file in deploy/ parses, into mappings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deploy.files import YAML_FILES, load_all, rel


@pytest.mark.parametrize("path", YAML_FILES, ids=rel)
def test_yaml_parses(path: Path) -> None:
    docs = load_all(path)
    assert docs, f"{rel(path)} has no YAML document"
    assert all(isinstance(doc, dict) for doc in docs)
