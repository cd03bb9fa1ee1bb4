"""A short run of the soak (bench/soak.py; ``make soak`` runs it longer): two gunicorn
instances on one Redis, concurrent clients with retries and duplicated requests; then
every game's event log replays to its stored state and no 5xx was answered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.redis_server import redis_server_binary

SECONDS = float(os.environ.get("SOAK_TEST_SECONDS", "45"))
SOAK = Path(__file__).resolve().parents[2] / "bench" / "soak.py"


@pytest.mark.skipif(redis_server_binary() is None, reason="needs redis-server")
def test_soak_loses_nothing(tmp_path):
    figures = tmp_path / "soak.json"
    argv = [sys.executable, str(SOAK), "--duration", str(SECONDS), "--clients", "10"]
    argv += ["--json", str(figures), "--work", str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=SECONDS + 240)
    assert figures.exists(), done.stderr[-4000:]
    result = json.loads(figures.read_text())
    print(
        f"\nsoak: {result['requests']} requests ({result['requests_per_s']}/s), "
        f"{result['games']} games ({result['games_finished']} finished), "
        f"{result['changes_acknowledged']} changes, latency {result['latency']}, "
        f"duplicates {result['duplicates']} + {result['concurrent_duplicates']} concurrent"
    )
    assert not result["server_errors"], result["server_errors"]
    assert not result["mismatched_duplicates"], result["mismatched_duplicates"]
    assert not result["problems"], result["problems"]
    assert result["ok"]
    assert done.returncode == 0, done.stderr[-4000:]
    assert result["games"] >= 10 and result["games_finished"] >= 1
    assert result["replayed_answers"] > 0
