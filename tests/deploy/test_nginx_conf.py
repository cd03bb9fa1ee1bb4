"""deploy/nginx.conf: round robin over the compose file's API replicas, the API's
problems for nginx's own errors, the request id, the JSON access log, /metrics kept
private, and `nginx -t` where nginx is installed (test_topology.py runs it)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from flask import Flask

from service.api import problems
from service.api.middleware import REQUEST_ID
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


def _named_location(text: str, name: str) -> str:
    found = re.search(rf"^\s*location\s+{re.escape(name)}\s+\{{$(.*?)^\s*\}}$", text, re.M | re.S)
    assert found, f"location {name}"
    return found.group(1)


@pytest.mark.parametrize(
    ("status", "location", "retry_after"),
    [(502, "@bad_gateway", True), (503, "@unavailable", True), (504, "@gateway_timeout", False)],
)
def test_nginx_errors_are_the_apis_problems(status: int, location: str, retry_after: bool) -> None:
    text = NGINX_CONF.read_text()
    assert re.search(rf"^\s*error_page\s+{status}\s+{location};", text, re.M)
    assert not re.search(r"proxy_intercept_errors\s+on", text), "the API's own errors pass"
    body = _named_location(text, location)
    assert re.search(r"^\s*default_type\s+application/problem\+json;", body, re.M)
    assert re.search(r"^\s*add_header\s+X-Request-ID\s+\$request_id_out\s+always;", body, re.M)
    assert bool(re.search(r"^\s*add_header\s+Retry-After\s+1\s+always;", body, re.M)) is retry_after
    answer = re.search(rf"^\s*return\s+{status}\s+'(.*)';$", body, re.M)
    assert answer, "a body"
    problem = json.loads(answer.group(1).replace("\\n", ""))
    with Flask(__name__).app_context():
        expected = json.loads(problems.problem(problem["code"], problem["detail"]).get_data())
    assert problem == expected  # the code's status and title, in the API's own shape


def test_nginx_keeps_metrics_off_the_public_listener() -> None:
    body = _named_location(NGINX_CONF.read_text(), "= /metrics")
    assert "proxy_pass" not in body
    answer = re.search(r"^\s*return\s+404\s+'(.*)';$", body, re.M)
    assert answer and json.loads(answer.group(1).replace("\\n", ""))["code"] == "NOT_FOUND"


def test_nginx_keeps_a_request_id_the_api_keeps_and_passes_it_on() -> None:
    text = NGINX_CONF.read_text()
    found = re.search(r'map\s+\$http_x_request_id\s+\$request_id_out\s+\{\s*"~(.*)"', text)
    assert found, "the request id map"
    pattern = found.group(1)
    assert pattern == f"^{REQUEST_ID.pattern}$", "nginx keeps exactly what the API keeps"
    assert re.search(r"^\s*proxy_set_header\s+X-Request-ID\s+\$request_id_out;", text, re.M)
    assert re.search(
        r"^\s*proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for;", text, re.M
    )


def test_nginx_access_log_is_json_with_typed_numbers() -> None:
    text = NGINX_CONF.read_text()
    found = re.search(r"log_format\s+(\w+)\s+escape=json\s+((?:'[^']*'\s*)+);", text)
    assert found, "a JSON log format"
    assert re.search(rf"^\s*access_log\s+/dev/stdout\s+{found.group(1)};", text, re.M)
    template = "".join(re.findall(r"'([^']*)'", found.group(2)))
    sample = {"$status": "200", "$body_bytes_sent": "512", "$duration_ms": "12"}
    line = re.sub(r"\$\w+", lambda m: sample.get(m.group(0), "x"), template)
    entry = json.loads(line)
    assert (entry["status"], entry["bytes"], entry["duration_ms"]) == (200, 512, 12)
    # the API's access-log field names (service/logs.py), and the upstream tried
    assert {"time", "remote", "method", "path", "query", "request_id", "upstream"} <= entry.keys()
    assert "$time_iso8601" in template and "$request_id_out" in template


def test_nginx_caps_a_games_events_per_address_with_the_apis_problem() -> None:
    text = NGINX_CONF.read_text()
    zone = re.search(
        r"^\s*limit_conn_zone\s+\$binary_remote_addr\s+zone=(\w+):\d+[mk];", text, re.M
    )
    assert zone, "a zone of requests in progress per client address"
    found = re.search(r"^\s*location\s+~\s+(\S+)\s+\{([^}]*)\}", text, re.M)
    assert found, "the events location"
    body = found.group(2)
    cap = re.search(rf"^\s*limit_conn\s+{zone.group(1)}\s+(\d+);", body, re.M)
    assert cap, "the events location is capped per address"
    assert re.search(r"^\s*limit_conn_status\s+429;", body, re.M)
    # above the API's own cap: where both apply, the API's answer (its count is every
    # instance's, its Retry-After computed) is the one clients see
    assert int(cap.group(1)) > Config.from_env({}).stream_limit_per_address
    assert re.search(r"^\s*error_page\s+429\s+@too_many_streams;", text, re.M)
    named = _named_location(text, "@too_many_streams")
    assert re.search(r"^\s*default_type\s+application/problem\+json;", named, re.M)
    assert re.search(r"^\s*add_header\s+Retry-After\s+\d+\s+always;", named, re.M)
    assert re.search(r"^\s*add_header\s+X-Request-ID\s+\$request_id_out\s+always;", named, re.M)
    assert re.search(r"^\s*keepalive_timeout\s+0;", named, re.M), "the refused connection closes"
    answer = re.search(r"^\s*return\s+429\s+'(.*)';$", named, re.M)
    assert answer, "a body"
    problem = json.loads(answer.group(1).replace("\\n", ""))
    assert problem["code"] == "TOO_MANY_STREAMS"
    with Flask(__name__).app_context():
        expected = json.loads(problems.problem(problem["code"], problem["detail"]).get_data())
    assert problem == expected


def test_nginx_has_connections_for_the_streams_an_instance_holds() -> None:
    text = NGINX_CONF.read_text()
    connections = re.search(r"^\s*worker_connections\s+(\d+);", text, re.M)
    files = re.search(r"^\s*worker_rlimit_nofile\s+(\d+);", text, re.M)
    assert connections and files
    # a proxied stream holds two connections of an nginx worker: one such worker
    # carries what one gunicorn worker holds (not nginx's default 1024, which one
    # address filled with idle streams)
    defaults = Config.from_env({})
    assert int(connections.group(1)) >= 2 * defaults.gunicorn_worker_connections
    assert int(files.group(1)) >= 2 * int(connections.group(1))
