"""The deployment files in deploy/, the settings they must agree on, and how the
offline checks read them (no container engine, no cluster).

The checks: every YAML parses (test_yaml.py); the Dockerfile is structurally right
(test_dockerfile.py) and gunicorn's config binds and loads as intended
(test_gunicorn_conf.py); the compose file validates against the compose spec
(check-jsonschema's vendored schema) and is wired as intended (test_compose.py), with
nginx.conf in front (test_nginx_conf.py); the Kubernetes manifests validate against the
Kubernetes JSON schemas (kubernetes-validate, schemas ship inside the package) and agree
with each other and with the Dockerfile (test_k8s_manifests.py). Tools that may be absent
(docker compose plugin, nginx, kubectl) are used when present and skipped with the
reason otherwise.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
NGINX_CONF = DEPLOY / "nginx.conf"
GUNICORN_CONF = DEPLOY / "gunicorn.conf.py"
DOCKERIGNORE = REPO / ".dockerignore"

PORT = 8000
APP_UID = 10001
WSGI_APP = "service.wsgi:app"
# Oldest Kubernetes minor the manifests are meant for, and the newest schemas shipped.
K8S_MIN_VERSION = "1.29"

K8S_FILES = sorted(p for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")
YAML_FILES = [COMPOSE, *sorted(K8S.glob("*.yaml"))]


def rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def load_all(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def manifest(kind: str, component: str = "api") -> dict[str, Any]:
    """The one ``kind`` of ``component`` (the API's unless told: the webhook worker
    has a Deployment too)."""
    found = [
        doc
        for p in K8S_FILES
        for doc in load_all(p)
        if doc.get("kind") == kind
        and doc["metadata"].get("labels", {}).get("app.kubernetes.io/component") == component
    ]
    assert len(found) == 1, f"expected exactly one {kind} in deploy/k8s, found {len(found)}"
    return found[0]


def api_container() -> dict[str, Any]:
    containers = manifest("Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def run_command(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=60, cwd=REPO, check=False, **kwargs
    )
