"""Offline checks of the deployment files in deploy/ (no container engine, no cluster).

What is checked here: every YAML parses; the Kubernetes manifests validate against the
Kubernetes JSON schemas (kubernetes-validate, schemas ship inside the package) and agree
with each other and with the Dockerfile; the compose file validates against the compose
spec (check-jsonschema's vendored schema) and is wired as intended; the Dockerfile and
nginx.conf are structurally right. Tools that may be absent (docker compose plugin, nginx,
kubectl) are used when present and skipped with the reason otherwise.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
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


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def _load_all(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def _k8s(kind: str) -> dict[str, Any]:
    found = [doc for p in K8S_FILES for doc in _load_all(p) if doc.get("kind") == kind]
    assert len(found) == 1, f"expected exactly one {kind} in deploy/k8s, found {len(found)}"
    return found[0]


def _container() -> dict[str, Any]:
    containers = _k8s("Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=60, cwd=REPO, check=False, **kwargs
    )


# ---------------------------------------------------------------- Dockerfile parsing


def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with comments dropped and continuations joined."""
    logical: list[str] = []
    current = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        logical.append(current + line)
        current = ""
    assert not current, "Dockerfile ends inside a line continuation"
    out = []
    for line in logical:
        instr, _, args = line.partition(" ")
        out.append((instr.upper(), args.strip()))
    return out


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for instr, args in _dockerfile_instructions():
        if instr == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((instr, args))
    return stages


def _global_args() -> dict[str, str]:
    args = {}
    for instr, rest in _dockerfile_instructions():
        if instr == "FROM":
            break
        if instr == "ARG" and "=" in rest:
            name, _, value = rest.partition("=")
            args[name] = value
    return args


def _exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


# ---------------------------------------------------------------- YAML


@pytest.mark.parametrize("path", YAML_FILES, ids=_rel)
def test_yaml_parses(path: Path) -> None:
    docs = _load_all(path)
    assert docs, f"{_rel(path)} has no YAML document"
    assert all(isinstance(doc, dict) for doc in docs)


# ---------------------------------------------------------------- Dockerfile


def test_dockerfile_is_multi_stage_on_python_311_slim() -> None:
    stages = _stages()
    assert len(stages) >= 2, "expected a builder stage and a runtime stage"
    image = stages[-1][0][1].split()[0]
    for name, value in _global_args().items():
        image = image.replace("${" + name + "}", value).replace("$" + name, value)
    assert image == "python:3.11-slim"
    runtime = stages[-1]
    assert any(i == "COPY" and a.startswith("--from=") for i, a in runtime), (
        "runtime stage should copy the installed prefix from the builder"
    )


def test_dockerfile_installs_runtime_deps_only() -> None:
    runs = " ".join(a for i, a in _dockerfile_instructions() if i == "RUN")
    assert "pip wheel" in runs
    assert "--prefix" in runs
    assert "[dev]" not in runs and ".[" not in runs, "the image must not install extras"
    assert not re.search(r"pip install\s+(-e|--editable)\b", runs)


def test_dockerfile_runs_as_fixed_non_root_user_before_cmd() -> None:
    runtime = _stages()[-1]
    names = [i for i, _ in runtime]
    assert "USER" in names and "CMD" in names
    user_idx = max(i for i, name in enumerate(names) if name == "USER")
    assert user_idx < names.index("CMD")
    user = runtime[user_idx][1].split(":")[0]
    assert user not in {"root", "0"}
    # Numeric, so Kubernetes' runAsNonRoot can verify it, and the same as the manifests.
    assert user == str(APP_UID)
    pod_sc = _k8s("Deployment")["spec"]["template"]["spec"]["securityContext"]
    assert pod_sc["runAsUser"] == APP_UID


def test_dockerfile_healthcheck_uses_stdlib_against_healthz() -> None:
    checks = [a for i, a in _dockerfile_instructions() if i == "HEALTHCHECK"]
    assert len(checks) == 1
    check = checks[0]
    assert "/healthz" in check
    assert "urllib" in check
    assert "curl" not in check and "wget" not in check, "neither exists in python:slim"


def test_dockerfile_cmd_env_expose_stopsignal() -> None:
    instructions = _dockerfile_instructions()
    cmds = [a for i, a in instructions if i == "CMD"]
    assert _exec_form(cmds[-1]) == ["gunicorn", "-c", "deploy/gunicorn.conf.py", WSGI_APP]
    assert [a for i, a in instructions if i == "ENTRYPOINT"] == []

    env = " ".join(a for i, a in instructions if i == "ENV")
    for setting in ("HOST=0.0.0.0", "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1"):
        assert setting in env.split(), setting
    assert f"PORT={PORT}" in env.split()

    assert [a for i, a in instructions if i == "EXPOSE"] == [str(PORT)]
    assert [a for i, a in instructions if i == "STOPSIGNAL"] == ["SIGTERM"]


def test_dockerfile_copy_sources_exist_and_pass_dockerignore() -> None:
    """Every build-context COPY source exists and is re-included by the allow-list."""
    lines = [ln.strip() for ln in DOCKERIGNORE.read_text().splitlines()]
    patterns = [ln for ln in lines if ln and not ln.startswith("#")]
    assert patterns[0] == "*", ".dockerignore is an allow-list: it starts by excluding all"
    allowed = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}

    for instr, args in _dockerfile_instructions():
        if instr != "COPY" or args.startswith("--from="):
            continue
        *sources, _dest = shlex.split(args)
        for source in sources:
            if any(ch in source for ch in "*?["):
                continue  # optional globs (README*); a required file is never a glob here
            assert (REPO / source).exists(), f"COPY source {source} is missing from the repo"
            assert source in allowed, f".dockerignore does not admit {source}"


# ---------------------------------------------------------------- gunicorn default port


def test_gunicorn_config_defaults_to_port_8000() -> None:
    assert GUNICORN_CONF.exists(), "deploy/gunicorn.conf.py (copied by the Dockerfile)"
    probe = (
        "import json, os, runpy, sys\n"
        "for k in ('HOST', 'PORT'): os.environ.pop(k, None)\n"
        "ns = runpy.run_path(sys.argv[1])\n"
        "b = ns.get('bind')\n"
        "print(json.dumps([b] if isinstance(b, str) else b))\n"
    )
    result = _run([sys.executable, "-c", probe, str(GUNICORN_CONF)])
    assert result.returncode == 0, result.stderr
    bind = json.loads(result.stdout.strip().splitlines()[-1])
    # No bind at all means gunicorn's own default, 127.0.0.1:8000.
    assert bind is None or any(str(b).endswith(f":{PORT}") for b in bind), bind


def test_gunicorn_master_imports_neither_the_app_nor_the_store() -> None:
    """The master reads the config and the worker class; gevent patches the standard
    library in each worker, so what makes locks or sockets must be imported there."""
    probe = (
        "import json, runpy, sys\n"
        "from gunicorn.util import load_class\n"
        "ns = runpy.run_path(sys.argv[1])\n"
        "load_class(ns['worker_class'])\n"
        "late = ('flask', 'redis', 'fakeredis', 'prometheus_client', 'service.store',\n"
        "        'service.app', 'service.api')\n"
        "print(json.dumps([name for name in late if name in sys.modules]))\n"
    )
    result = _run([sys.executable, "-c", probe, str(GUNICORN_CONF)])
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
    assert "MonkeyPatchWarning" not in result.stderr


# ---------------------------------------------------------------- compose


def _compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_validates_against_compose_spec() -> None:
    pytest.importorskip("check_jsonschema", reason="check-jsonschema (dev extra) not installed")
    result = _run(
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


def test_docker_compose_config() -> None:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("docker client not on PATH")
    if _run([docker, "compose", "version"]).returncode != 0:
        pytest.skip("docker compose plugin not installed (`docker compose version` fails)")
    result = _run([docker, "compose", "-f", str(COMPOSE), "config", "-q"])
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- nginx


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
    result = _run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(conf), "-g", f"pid {tmp_path}/nginx.pid;"]
    )
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- Kubernetes


def test_k8s_manifests_are_namespace_less_and_complete() -> None:
    kinds = set()
    for path in K8S_FILES:
        for doc in _load_all(path):
            assert {"apiVersion", "kind", "metadata"} <= doc.keys(), _rel(path)
            assert doc["metadata"].get("name"), _rel(path)
            assert "namespace" not in doc["metadata"], f"{_rel(path)} sets a namespace"
            kinds.add((doc["apiVersion"], doc["kind"]))
    assert kinds == {
        ("apps/v1", "Deployment"),
        ("v1", "Service"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ("policy/v1", "PodDisruptionBudget"),
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
    }


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert kustomization["kind"] == "Kustomization"
    assert "namespace" not in kustomization
    assert sorted(kustomization["resources"]) == sorted(p.name for p in K8S_FILES)


@pytest.mark.parametrize("path", K8S_FILES, ids=_rel)
def test_k8s_manifest_matches_kubernetes_schema(path: Path) -> None:
    kv = pytest.importorskip(
        "kubernetes_validate", reason="kubernetes-validate (dev extra) not installed"
    )
    for version in (K8S_MIN_VERSION, kv.latest_version()):
        for doc in _load_all(path):
            # strict: unknown (e.g. misspelt) fields are errors too.
            kv.validate(doc, version, strict=True)


def test_kubectl_kustomize_renders() -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed; `kubectl kustomize` not run")
    result = _run([kubectl, "kustomize", str(K8S)])
    assert result.returncode == 0, result.stderr
    rendered = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert len(rendered) == sum(len(_load_all(p)) for p in K8S_FILES)


def test_deployment_probes_and_ports() -> None:
    deployment = _k8s("Deployment")
    assert deployment["spec"]["replicas"] == 2
    container = _container()
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": PORT}

    def probe_target(name: str) -> tuple[str, int]:
        get = container[name]["httpGet"]
        port = get["port"]
        return get["path"], ports[port] if isinstance(port, str) else port

    assert probe_target("readinessProbe") == ("/readyz", PORT)
    assert probe_target("livenessProbe") == ("/healthz", PORT)
    if "startupProbe" in container:
        assert probe_target("startupProbe") == ("/healthz", PORT)


def test_deployment_security_and_resources() -> None:
    pod = _k8s("Deployment")["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 40
    assert pod["securityContext"]["runAsNonRoot"] is True
    container = _container()
    sc = container["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert "add" not in sc["capabilities"]
    for bound in ("requests", "limits"):
        assert {"cpu", "memory"} <= container["resources"][bound].keys(), bound
    # Read-only root: gunicorn's worker heartbeat files need a writable /tmp.
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]


def test_deployment_env_comes_from_configmap_and_secret() -> None:
    container = _container()
    configmap = _k8s("ConfigMap")
    secret = _k8s("Secret")
    refs = [e["configMapRef"]["name"] for e in container["envFrom"] if "configMapRef" in e]
    assert refs == [configmap["metadata"]["name"]]
    assert all(isinstance(v, str) for v in configmap["data"].values())
    assert "REDIS_URL" not in configmap["data"]

    env = {e["name"]: e for e in container["env"]}
    ref = env["REDIS_URL"]["valueFrom"]["secretKeyRef"]
    assert ref["name"] == secret["metadata"]["name"]
    assert ref["key"] in secret["stringData"]
    assert "data" not in secret, "example Secret uses stringData"
    assert "placeholder" in secret["stringData"][ref["key"]].lower()


def test_service_hpa_pdb_target_the_deployment() -> None:
    deployment = _k8s("Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    container_ports = {p["name"]: p["containerPort"] for p in _container()["ports"]}

    service = _k8s("Service")
    assert service["spec"]["selector"].items() <= pod_labels.items()
    (port,) = service["spec"]["ports"]
    target = port["targetPort"]
    assert (container_ports[target] if isinstance(target, str) else target) == PORT

    pdb = _k8s("PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()

    hpa = _k8s("HorizontalPodAutoscaler")
    ref = hpa["spec"]["scaleTargetRef"]
    assert (ref["apiVersion"], ref["kind"], ref["name"]) == (
        "apps/v1",
        "Deployment",
        deployment["metadata"]["name"],
    )
    assert hpa["spec"]["minReplicas"] >= pdb["spec"]["minAvailable"] + 1
    metrics = [m["resource"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Resource"]
    assert metrics == ["cpu"]
