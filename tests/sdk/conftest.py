"""The generated SDKs' tests: a live service (gunicorn on the test Redis, in either
AUTH_MODE) to play against, and the check that a typed program holds none of the escapes a strict
type checker would let through."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.gunicorn_server import GunicornServer
from service.hosting import apps
from service.store import GameStore

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


@dataclass(frozen=True)
class AppsService:
    """A live service in AUTH_MODE=apps and the secret key of an app made on it."""

    url: str
    app_key: str


@pytest.fixture
def apps_service(
    store: GameStore, redis_url: str, gunicorn: Callable[[Mapping[str, str]], GunicornServer]
) -> AppsService:
    """The service (gunicorn) in AUTH_MODE=apps on the test Redis, with an app made
    as ``three-thirteen-admin apps create`` makes it."""
    _app, key = apps.create_app_record(store.apps, "sdk tests")
    return AppsService(gunicorn({"REDIS_URL": redis_url, "AUTH_MODE": "apps"}).url, key)


@pytest.fixture
def service_url(
    redis_url: str, redis_client: object, gunicorn: Callable[[Mapping[str, str]], GunicornServer]
) -> str:
    """The URL of a live service (gunicorn, the service's own settings) on the test Redis."""
    return gunicorn({"REDIS_URL": redis_url}).url
