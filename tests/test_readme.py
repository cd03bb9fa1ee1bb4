"""The README tells the truth: the make targets it names exist, its table of
endpoints is the spec's, its links stay in the repository and its curl session
(and examples/quickstart.sh) plays a turn against a real server.

Every setting and every error code is documented in docs/ (tests/test_docs.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.gunicorn_server import GunicornServer

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_make_targets_named_in_the_readme_exist():
    makefile = (ROOT / "Makefile").read_text()
    for target in set(re.findall(r"`make ([a-z-]+)", README)):
        assert re.search(rf"^{target}:", makefile, flags=re.M), target


def _json_values(text: str) -> list[Any]:
    """The JSON values printed one after another (curl adds no newline)."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(text, at)
        values.append(value)
    return values


def _curl_session() -> str:
    """The README's curl session: the first ``sh`` block after its heading."""
    section = README.split("## A first game with curl", 1)[1]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_curl_session_runs_as_written(redis_url: str) -> None:
    """Against a real gunicorn: the seat to play draws, then discards a card it holds."""
    session = _curl_session()
    assert session.startswith("BASE=http://127.0.0.1:8000\n")
    with GunicornServer({"REDIS_URL": redis_url}) as server:
        script = session.replace("BASE=http://127.0.0.1:8000", f"BASE={server.url}", 1)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        created, view, discarded, events = _json_values(done.stdout)
        assert created["status"] == "playing" and len(created["players"]) == 2
        assert view["version"] == 1 and len(view["hand"]) == 3
        assert discarded["version"] == 3 and len(discarded["hand"]) == 3
        played = [e for e in events["events"] if e["type"] in ("drew", "discarded")]
        assert [e["type"] for e in played] == ["drew", "discarded"]

        quickstart = ROOT / "examples" / "quickstart.sh"
        done = subprocess.run(
            ["bash", str(quickstart), server.url], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert "'drew', 'discarded'" in done.stdout, done.stdout


def _shown(answer: Any, shown: Any) -> bool:
    """``answer`` is what the README shows: the same JSON, where ``"…"`` stands for
    any value."""
    if shown == "…":
        return True
    if isinstance(shown, dict):
        return (
            isinstance(answer, dict)
            and answer.keys() == shown.keys()
            and all(_shown(answer[k], v) for k, v in shown.items())
        )
    return bool(answer == shown)


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_quick_join_answers_as_shown(redis_url: str, redis_client: object) -> None:
    """The lobby session of "Finding a game" runs, its quick-join answers what the
    README shows under it, and the lobby (emptied first) lists that game."""
    section = README.split("## Finding a game", 1)[1]
    session = section.split("```sh\n", 1)[1].split("```", 1)[0]
    shown = json.loads(re.findall(r"^# (\{.*\})$", session, flags=re.M)[0])
    with GunicornServer({"REDIS_URL": redis_url}) as server:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", f"BASE={server.url}\n{session}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    joined, lobby = _json_values(done.stdout)
    assert _shown(joined, shown), (joined, shown)
    assert [game["id"] for game in lobby["games"]] == [joined["id"]]


SERVED_OUTSIDE_THE_SPEC = {("GET", "/openapi.json"), ("GET", "/docs")}
"""Routes of the package's Swagger UI and spec, which the spec does not describe."""


def endpoint_rows(page: str) -> list[tuple[str, str]]:
    """The (method, path) of each row of the page's section "Endpoints"."""
    section = page.split("## Endpoints", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([A-Z]+) (/[^`]*)` \|", section, flags=re.M)


def test_the_endpoint_tables_are_the_spec():
    """The README's table and apps mode's own in docs/AUTH.md: every route once."""
    rows = endpoint_rows(README) + endpoint_rows((ROOT / "docs" / "AUTH.md").read_text())
    spec = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    routes = {
        (method.upper(), path.replace("{game_id}", "{id}"))
        for path, item in spec["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }
    assert len(rows) == len(set(rows))
    assert set(rows) == routes | SERVED_OUTSIDE_THE_SPEC


def test_links_stay_in_the_repository():
    """Relative links of the README and docs/ point inside a clone (no ../shared)."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            resolved = (page.parent / target).resolve()
            assert resolved.is_relative_to(ROOT), (page.name, target)
