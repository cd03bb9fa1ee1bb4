"""The generated SDKs' tests: a live service (gunicorn on the test Redis) to play
against, and the check that a typed program holds none of the escapes a strict
type checker would let through."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from harness.gunicorn_server import GunicornServer

collect_ignore = ["play.py"]  # a program of the generated client, run apart (not importable here)

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`(?:[^`\\]|\\.)*`', re.S)
_COMMENTS = {"//": re.compile(r"//[^\n]*|/\*.*?\*/", re.S), "#": re.compile(r"#[^\n]*")}


def code_only(source: str, comments: str) -> str:
    """``source`` without its string literals, then without its comments
    (``comments``: ``"//"`` for TypeScript, ``"#"`` for Python).

    >>> code_only('const a = "x as y"; // as any', "//")
    'const a = ""; '
    """
    return _COMMENTS[comments].sub("", _STRING.sub('""', source))


def escapes(source: str, comments: str, forbidden: Mapping[str, str]) -> list[str]:
    """The names of the ``forbidden`` patterns (name -> regex) found in the code."""
    code = code_only(source, comments)
    return [name for name, regex in forbidden.items() if re.search(regex, code)]


def run(command: list[str], cwd: Path, **env: str) -> str:
    """Run ``command`` in ``cwd`` (``env`` added to the environment); its output,
    once it exited 0 (else the test fails with what it printed)."""
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=300, env={**os.environ, **env}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def service_url(
    redis_url: str, redis_client: object, gunicorn: Callable[[Mapping[str, str]], GunicornServer]
) -> str:
    """The URL of a live service (gunicorn, the service's own settings) on the test Redis."""
    return gunicorn({"REDIS_URL": redis_url}).url
