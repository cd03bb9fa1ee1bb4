"""deploy/nginx.conf: round robin over the compose file's API replicas, and `nginx -t`
where nginx is installed."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from service.config import Config
from tests.deploy.files import NGINX_CONF, PORT, run_command


def test_nginx_conf_round_robins_over_api_replicas() -> None:
    text = NGINX_CONF.read_text()
    assert re.search(r"^\s*resolver\s+127\.0\.0\.11\b", text, re.M), "Docker's DNS"
    assert re.search(rf"^\s*listen\s+{PORT};", text, re.M)
    # A variable in proxy_pass makes nginx resolve `api` at run time (all replicas).
    upstream = re.search(r"^\s*set\s+\$(\w+)\s+http://api:(\d+);", text, re.M)
    assert upstream and upstream.group(2) == str(PORT)
    assert re.search(rf"^\s*proxy_pass\s+\${upstream.group(1)};", text, re.M)
    assert text.count("{") == text.count("}")


def test_nginx_t(tmp_path: Path) -> None:
    nginx = shutil.which("nginx")
    if nginx is None:
        pytest.skip("nginx not installed; `nginx -t` not run")
    # Distro builds compile in temp paths under /var/lib/nginx; keep everything in tmp_path.
    temp_paths = " ".join(
        f"{kind}_temp_path {tmp_path / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = tmp_path / "nginx.conf"
    conf.write_text(NGINX_CONF.read_text().replace("http {", "http {\n" + temp_paths, 1))
    (tmp_path / "logs").mkdir()
    result = run_command(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(conf), "-g", f"pid {tmp_path}/nginx.pid;"]
    )
    assert result.returncode == 0, result.stderr


def test_nginx_passes_a_games_events_unbuffered_with_fitting_timeouts() -> None:
    text = NGINX_CONF.read_text()
    found = re.search(r"^\s*location\s+~\s+(\S+)\s+\{([^}]*)\}", text, re.M)
    assert found, "a regex location for a game's events"
    pattern, body = found.groups()
    game = "/v1/games/" + "x" * 22
    assert re.search(pattern, game + "/events")
    assert not any(re.search(pattern, game + tail) for tail in ("", "/view", "/events/x"))
    for directive in ("proxy_buffering off", "proxy_cache off", "gzip off"):
        assert re.search(rf"^\s*{directive};", body, re.M), directive
    read = re.search(r"^\s*proxy_read_timeout\s+(\d+)s;", body, re.M)
    assert read, "the events location sets its own read timeout"
    defaults = Config.from_env({})
    # The longest silence nginx allows: a long poll answers well within it, and a
    # stream's heartbeat may come late (a busy worker) without the stream being cut.
    assert int(read.group(1)) >= defaults.long_poll_max_seconds + 30
    assert int(read.group(1)) >= 4 * defaults.sse_heartbeat_seconds
