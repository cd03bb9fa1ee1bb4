"""The Python SDK, generated from the committed spec as ``make sdk`` generates it
(openapi-python-client, pinned in the dev extras), used by a program that passes
``mypy --strict`` without casts, ignores, ``Any`` or ``additional_properties``
and plays round 1 of a game against a live service in AUTH_MODE=apps, with an
app's key and its players' tokens (tests/sdk/play.py)."""

from __future__ import annotations

import io
import shutil
import sys
import tokenize
from pathlib import Path

import pytest

from sdk.build import python_client
from tests.sdk.conftest import AppsService, run

PROGRAM = Path(__file__).with_name("play.py")
FORBIDDEN = ("cast", "Any", "additional_properties")


def names(source: str) -> set[str]:
    """The names of the code (no string, no comment).

    >>> sorted(names("x = cast(int, y)  # Any"))
    ['cast', 'int', 'x', 'y']
    """
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {t.string for t in tokens if t.type == tokenize.NAME}


def readme_example(readme: str) -> str:
    """The ``python`` code block of the package's README."""
    return readme.split("```python\n", 1)[1].split("```", 1)[0]


SDK_DOC = Path(__file__).resolve().parents[2] / "docs" / "SDK.md"


def doc_examples(page: str) -> list[str]:
    """Every ``python`` code block of ``page``."""
    return [block.split("```", 1)[0] for block in page.split("```python\n")[1:]]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = python_client(tmp_path_factory.mktemp("py") / "three-thirteen-client")
    shutil.copyfile(PROGRAM, root / "play.py")
    (root / "readme_example.py").write_text(readme_example((root / "README.md").read_text()))
    examples = doc_examples(SDK_DOC.read_text())
    assert examples, "docs/SDK.md shows the Python client following a game and retrying"
    for number, example in enumerate(examples):
        (root / f"sdk_doc_{number}.py").write_text(example)
    return root


def test_the_program_has_no_casts_ignores_or_untyped_values() -> None:
    source = PROGRAM.read_text()
    assert names(source) & set(FORBIDDEN) == set()
    assert "type: ignore" not in source


def test_the_program_and_the_examples_pass_mypy_strict(package: Path) -> None:
    """play.py, the package README's example and docs/SDK.md's Python blocks."""
    docs = sorted(path.name for path in package.glob("sdk_doc_*.py"))
    mypy = [sys.executable, "-m", "mypy", "--strict", "play.py", "readme_example.py", *docs]
    run(mypy, package, MYPYPATH=str(package))


def test_the_typed_program_plays_round_one_in_apps_mode(
    package: Path, apps_service: AppsService
) -> None:
    """The app's key creates the game for two players, whose tokens play it."""
    command = [sys.executable, "play.py", apps_service.url, apps_service.app_key]
    played = run(command, package, PYTHONPATH=str(package))
    assert "played round 1 of" in played
