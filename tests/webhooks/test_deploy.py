"""The shipped deploy files run the webhook delivery worker as a process of its own,
with the API's image and settings."""

from __future__ import annotations

from tests.deploy.files import COMPOSE, load_all, manifest


def test_k8s_runs_the_worker_with_the_apis_image_and_settings():
    api = manifest("Deployment")["spec"]["template"]["spec"]
    hooks = manifest("Deployment", "webhooks")["spec"]["template"]["spec"]
    [worker] = hooks["containers"]
    [server] = api["containers"]
    assert worker["command"] == ["three-thirteen-webhooks"]
    assert worker["image"] == server["image"]
    assert worker["envFrom"] == server["envFrom"] and worker["env"] == server["env"]
    assert worker["securityContext"] == server["securityContext"]
    assert hooks["securityContext"] == api["securityContext"]
    assert "ports" not in worker


def test_compose_runs_the_worker_beside_the_api():
    [compose] = load_all(COMPOSE)
    api, hooks = compose["services"]["api"], compose["services"]["webhooks"]
    assert hooks["command"] == ["three-thirteen-webhooks"]
    assert hooks["image"] == api["image"]
    assert hooks["environment"]["REDIS_URL"] == api["environment"]["REDIS_URL"]
    assert hooks["healthcheck"] == {"disable": True}  # no HTTP port to probe
    assert hooks["read_only"] is True and hooks["cap_drop"] == ["ALL"]
