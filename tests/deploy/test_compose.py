"""deploy/compose.yaml: valid against the compose spec, Redis persistent and
health-checked, two API replicas behind nginx."""

from __future__ import annotations

import re
import shutil
import sys
from typing import Any

import pytest
import yaml

from tests.deploy.files import (
    COMPOSE,
    DOCKERFILE,
    DOCKERIGNORE,
    NGINX_CONF,
    PORT,
    REPO,
    run_command,
)


def _compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_validates_against_compose_spec() -> None:
    pytest.importorskip("check_jsonschema", reason="check-jsonschema (dev extra) not installed")
    result = run_command(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec"]
        + [str(COMPOSE)]
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_redis_is_persistent_and_healthchecked() -> None:
    redis = _compose()["services"]["redis"]
    assert redis["image"] == "redis:7"
    command = " ".join(redis["command"])
    assert "--appendonly yes" in command and "--appendfsync everysec" in command
    assert any(str(v).endswith(":/data") for v in redis["volumes"])
    assert "redis-cli ping" in " ".join(redis["healthcheck"]["test"])


def test_compose_api_two_replicas_behind_nginx() -> None:
    compose = _compose()
    api = compose["services"]["api"]
    build_context = (COMPOSE.parent / api["build"]["context"]).resolve()
    assert build_context == REPO
    assert (build_context / api["build"]["dockerfile"]).resolve() == DOCKERFILE
    assert DOCKERIGNORE.parent == build_context
    assert api["deploy"]["replicas"] == 2
    assert api["environment"]["REDIS_URL"] == "redis://redis:6379/0"
    assert api["depends_on"]["redis"]["condition"] == "service_healthy"
    assert f"127.0.0.1:{PORT}/healthz" in " ".join(api["healthcheck"]["test"])
    assert "ports" not in api, "replicas must not publish host ports; nginx does"
    assert "container_name" not in api, "a fixed name prevents 2 replicas"

    lb = compose["services"]["lb"]
    assert lb["image"].startswith("nginx:") and "alpine" in lb["image"]
    assert lb["ports"] == [f"{PORT}:{PORT}"]
    source, target = lb["volumes"][0].split(":")[:2]
    assert (COMPOSE.parent / source).resolve() == NGINX_CONF
    assert target == "/etc/nginx/nginx.conf"
    # the descriptors nginx.conf asks for (a container cannot raise its hard limit)
    asked = re.search(r"^\s*worker_rlimit_nofile\s+(\d+);", NGINX_CONF.read_text(), re.M)
    assert asked and lb["ulimits"]["nofile"]["hard"] >= int(asked.group(1))
    assert lb["ulimits"]["nofile"]["soft"] >= int(asked.group(1))


def test_docker_compose_config() -> None:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("docker client not on PATH")
    if run_command([docker, "compose", "version"]).returncode != 0:
        pytest.skip("docker compose plugin not installed (`docker compose version` fails)")
    result = run_command([docker, "compose", "-f", str(COMPOSE), "config", "-q"])
    assert result.returncode == 0, result.stderr


def test_compose_api_trusts_nginx_and_adds_up_its_workers_metrics() -> None:
    api = _compose()["services"]["api"]
    env = api["environment"]
    assert env["TRUSTED_PROXY_HOPS"] == "1", "nginx, the one proxy in front"
    assert "ports" not in api, "reachable only through nginx: a client cannot forge its hop"
    metrics_dir = env["PROMETHEUS_MULTIPROC_DIR"]
    assert any(metrics_dir.startswith(tmpfs.rstrip("/") + "/") for tmpfs in api["tmpfs"])
