"""Apps mode on two gunicorn instances sharing the test Redis: what one is told
(a revocation, a bar, an app revoked by the operator's command) the other
honours within a second; the apps are made with the real command line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import requests

ROOT = Path(__file__).resolve().parents[2]


def admin(redis_url: str, *args: str, env: dict[str, str] | None = None) -> dict:
    """Run ``three-thirteen-admin --json ...`` (as ``python -m service.admin``)."""
    done = subprocess.run(
        [sys.executable, "-m", "service.admin", "--json", *args],
        cwd=ROOT,
        env={**os.environ, "REDIS_URL": redis_url, **(env or {})},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return orjson.loads(done.stdout)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def refused_within(url: str, headers: dict[str, str], seconds: float) -> float:
    """How long until ``url`` answers ``headers`` 401 or 404 (polling from now)."""
    start = time.monotonic()
    while True:
        status = requests.get(url, headers=headers, timeout=5).status_code
        if status in (401, 404):
            return time.monotonic() - start
        assert status == 200, status
        assert time.monotonic() - start < seconds, f"still accepted after {seconds} s"
        time.sleep(0.02)


def test_revocations_are_seen_by_the_other_instance_within_a_second(
    redis_client, redis_url, gunicorn
):
    env = {"REDIS_URL": redis_url, "AUTH_MODE": "apps"}
    one, two = gunicorn(env), gunicorn(env)
    made = admin(redis_url, "apps", "create", "cards")
    key = made["key"]
    assert key.startswith(f"t13_sk_{made['id']}_")
    listed = admin(redis_url, "apps", "list")["apps"]
    assert [a["id"] for a in listed] == [made["id"]]
    assert key not in orjson.dumps(listed).decode()  # never stored, never shown again
    created = requests.post(
        one.url + "/v1/games",
        json={"players": [{"name": "ann", "player_id": "u1"}, {"name": "bob", "player_id": "u2"}]},
        headers=bearer(key),
        timeout=10,
    ).json()
    game = f"/v1/games/{created['id']}/view"
    tokens = []
    for _ in range(2):
        minted = requests.post(
            one.url + "/v1/players/u1/tokens", json={"name": "ann"}, headers=bearer(key), timeout=10
        )
        assert minted.status_code == 201, minted.text
        tokens.append(minted.json()["token"])
    for server in (one, two):
        for token in tokens:
            assert requests.get(server.url + game, headers=bearer(token), timeout=5).ok
    # revoked on one instance, refused by the other at once (checked on every request)
    assert requests.delete(one.url + "/v1/players/u1/tokens", headers=bearer(key), timeout=5).ok
    for token in tokens:
        assert refused_within(two.url + game, bearer(token), 1.0) < 1.0
        answer = requests.get(two.url + game, headers=bearer(token), timeout=5)
        assert answer.json()["code"] == "INVALID_CREDENTIAL"
    # the key rotated with no overlap: the old key refused by both within a second
    rotated = admin(redis_url, "apps", "rotate", made["id"], "--overlap", "0")
    for server in (one, two):
        assert refused_within(server.url + "/v1/games", bearer(key), 1.5) < 1.5
        assert requests.get(server.url + "/v1/games", headers=bearer(rotated["key"]), timeout=5).ok
    # the app revoked: its games and keys refused everywhere within a second
    admin(redis_url, "apps", "revoke", made["id"])
    for server in (one, two):
        assert refused_within(server.url + game, bearer(rotated["key"]), 1.5) < 1.5
    for server in (one, two):
        logs = server.logs()
        assert key not in logs and rotated["key"] not in logs
        assert all(token not in logs for token in tokens)
