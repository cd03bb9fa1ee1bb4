"""The README's apps-mode quick start runs as written against a real server in apps
mode: an app made with the operator's command, player tokens minted, a turn played."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.gunicorn_server import GunicornServer

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _session() -> str:
    section = README.split("## Apps and players", 1)[1]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_apps_quick_start_runs_as_written(redis_client, redis_url, tmp_path):
    session = _session()
    base = "BASE=http://127.0.0.1:8000\n"
    redis_line = "export REDIS_URL=redis://127.0.0.1:6379/0"
    assert session.startswith(base + redis_line)
    admin = ".venv/bin/three-thirteen-admin"
    assert admin in session
    if (ROOT / admin).exists():
        session = session.replace(admin, str(ROOT / admin))
    else:  # a venv installed before the command was added
        session = session.replace(admin, f"{sys.executable} -m service.admin")
    with GunicornServer({"REDIS_URL": redis_url, "AUTH_MODE": "apps"}) as server:
        script = session.replace(base, f"BASE={server.url}\n", 1).replace(
            redis_line, f"export REDIS_URL={redis_url}", 1
        )
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,  # where its token files go
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        decoder = json.JSONDecoder()
        mine, at = decoder.raw_decode(done.stdout)
        moved, _ = decoder.raw_decode(done.stdout, at)
        [game] = mine["games"]
        assert game["status"] == "playing" and game["players"] == ["ann", "bob"]
        assert moved["seat"] == game["seat"] and moved["version"] == 2
        assert len(moved["hand"]) == 4  # three dealt, one drawn
