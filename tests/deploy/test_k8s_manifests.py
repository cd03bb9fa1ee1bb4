"""deploy/k8s: the manifests validate against the Kubernetes schemas and agree with each
other and with the Dockerfile (ports, probes, security, config and secret, selectors)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from service.config import Config
from tests.deploy.files import (
    K8S,
    K8S_FILES,
    K8S_MIN_VERSION,
    PORT,
    api_container,
    load_all,
    manifest,
    rel,
    run_command,
)


def test_k8s_manifests_are_namespace_less_and_complete() -> None:
    kinds = set()
    for path in K8S_FILES:
        for doc in load_all(path):
            assert {"apiVersion", "kind", "metadata"} <= doc.keys(), rel(path)
            assert doc["metadata"].get("name"), rel(path)
            assert "namespace" not in doc["metadata"], f"{rel(path)} sets a namespace"
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


@pytest.mark.parametrize("path", K8S_FILES, ids=rel)
def test_k8s_manifest_matches_kubernetes_schema(path: Path) -> None:
    kv = pytest.importorskip(
        "kubernetes_validate", reason="kubernetes-validate (dev extra) not installed"
    )
    for version in (K8S_MIN_VERSION, kv.latest_version()):
        for doc in load_all(path):
            # strict: unknown (e.g. misspelt) fields are errors too.
            kv.validate(doc, version, strict=True)


def test_kubectl_kustomize_renders() -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed; `kubectl kustomize` not run")
    result = run_command([kubectl, "kustomize", str(K8S)])
    assert result.returncode == 0, result.stderr
    rendered = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert len(rendered) == sum(len(load_all(p)) for p in K8S_FILES)


def test_deployment_probes_and_ports() -> None:
    deployment = manifest("Deployment")
    assert deployment["spec"]["replicas"] == 2
    container = api_container()
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
    pod = manifest("Deployment")["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 40
    assert pod["securityContext"]["runAsNonRoot"] is True
    container = api_container()
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
    container = api_container()
    configmap = manifest("ConfigMap")
    secret = manifest("Secret")
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
    deployment = manifest("Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    container_ports = {p["name"]: p["containerPort"] for p in api_container()["ports"]}

    service = manifest("Service")
    assert service["spec"]["selector"].items() <= pod_labels.items()
    (port,) = service["spec"]["ports"]
    target = port["targetPort"]
    assert (container_ports[target] if isinstance(target, str) else target) == PORT

    pdb = manifest("PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()

    hpa = manifest("HorizontalPodAutoscaler")
    ref = hpa["spec"]["scaleTargetRef"]
    assert (ref["apiVersion"], ref["kind"], ref["name"]) == (
        "apps/v1",
        "Deployment",
        deployment["metadata"]["name"],
    )
    assert hpa["spec"]["minReplicas"] >= pdb["spec"]["minAvailable"] + 1
    metrics = [m["resource"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Resource"]
    assert metrics == ["cpu"]


def test_configmap_trusts_one_proxy_and_adds_up_the_workers_metrics() -> None:
    data = manifest("ConfigMap")["data"]
    assert data["TRUSTED_PROXY_HOPS"] == "1"
    assert int(data["WEB_CONCURRENCY"]) > 1  # hence the shared metrics directory
    mounts = {m["mountPath"]: m["name"] for m in api_container()["volumeMounts"]}
    volumes = {v["name"]: v for v in manifest("Deployment")["spec"]["template"]["spec"]["volumes"]}
    (mount,) = [p for p in mounts if data["PROMETHEUS_MULTIPROC_DIR"].startswith(p + "/")]
    assert "emptyDir" in volumes[mounts[mount]]


def test_probes_fit_what_the_service_does() -> None:
    container = api_container()
    liveness, readiness = container["livenessProbe"], container["readinessProbe"]
    defaults = Config.from_env({})
    # gunicorn restarts a silent worker after GUNICORN_TIMEOUT: liveness restarts the pod
    # only for a process silent longer than that (a stuck master).
    assert liveness["periodSeconds"] * liveness["failureThreshold"] > defaults.gunicorn_timeout
    # /readyz waits at most 0.5 s for Redis (service/store); tests/ops/test_probes.py
    # checks both answer within these timeouts while hundreds of clients wait.
    assert readiness["timeoutSeconds"] >= 1 and liveness["timeoutSeconds"] >= 1
    annotations = manifest("Deployment")["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert (annotations["prometheus.io/port"], annotations["prometheus.io/path"]) == (
        str(PORT),
        "/metrics",
    )
