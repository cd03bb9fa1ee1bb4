"""The real image: deploy/Dockerfile built on ``BASE_IMAGE`` and run as an operator
runs it (``--network host``, read-only root, a tmpfs on /tmp as deploy/compose.yaml
and deploy/k8s give it), against a throwaway redis-server on this machine.

Run by ``make image-test`` (it builds an image: minutes); skipped in ``make test``
and wherever Docker is not available.  What it measured (build time, image size,
start to healthy, SIGTERM to exit) is printed and written to build/image-test.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from harness.live_game import LiveGame
from harness.ports import free_port
from harness.redis_server import RedisServer, redis_server_binary
from tests.deploy.files import APP_UID, DOCKERFILE, REPO

BASE_IMAGE = os.environ.get("BASE_IMAGE", "python:3.11-slim")
TAG = "three-thirteen:image-test"
FIGURES: dict[str, Any] = {"base_image": BASE_IMAGE}

pytestmark = pytest.mark.timeout(1800)


def _docker(*args: str, timeout: float = 120, check: bool = True) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert done.returncode == 0, f"docker {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout.strip()


def _docker_unavailable() -> str | None:
    if os.environ.get("T13_IMAGE_TEST") != "1":
        return "builds the image (minutes): run `make image-test`"
    if shutil.which("docker") is None:
        return "Docker is not installed (no `docker` on PATH)"
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        return f"the Docker daemon does not answer: {info.stderr.strip()[:300]}"
    if redis_server_binary() is None:
        return "redis-server is not installed (apt-get install redis-server)"
    return None


@pytest.fixture(scope="module")
def image() -> str:
    reason = _docker_unavailable()
    if reason:
        pytest.skip(reason)
    if subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True).returncode:
        pulled = subprocess.run(["docker", "pull", BASE_IMAGE], capture_output=True, text=True)
        if pulled.returncode:
            pytest.fail(
                f"base image {BASE_IMAGE} is not here and cannot be pulled "
                f"({pulled.stderr.strip()[:200]}); make one with deploy/make-base-image.sh "
                "and run `make image-test BASE_IMAGE=three-thirteen-base:bookworm`"
            )
    started = time.monotonic()
    _docker(
        "build", "--network", "host", "--build-arg", f"PYTHON_IMAGE={BASE_IMAGE}",
        "-f", str(DOCKERFILE), "-t", TAG, str(REPO),
        timeout=1500,
    )  # fmt: skip
    FIGURES["build_seconds"] = round(time.monotonic() - started, 1)
    FIGURES["image_bytes"] = int(_docker("image", "inspect", "-f", "{{.Size}}", TAG))
    return TAG


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with RedisServer() as server:
        yield server.url


class Container:
    def __init__(self, image: str, redis_url: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.started = time.monotonic()
        self.id = _docker(
            "run", "-d", "--network", "host", "--read-only", "--tmpfs", "/tmp",
            "-e", "HOST=127.0.0.1", "-e", f"PORT={self.port}", "-e", f"REDIS_URL={redis_url}",
            "-e", "WEB_CONCURRENCY=2", image,
        )  # fmt: skip

    def logs(self) -> str:
        return _docker("logs", "--tail", "60", self.id, check=False)

    def state(self, field: str) -> str:
        return _docker("inspect", "-f", "{{" + field + "}}", self.id)

    def wait_for(self, path: str, timeout: float = 120) -> float:
        """Seconds from ``docker run`` until ``path`` answers 200."""
        deadline = time.monotonic() + timeout
        while True:
            assert self.state(".State.Running") == "true", f"the container exited:\n{self.logs()}"
            try:
                if requests.get(self.url + path, timeout=2).status_code == 200:
                    return time.monotonic() - self.started
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, f"{path} never answered 200:\n{self.logs()}"
            time.sleep(0.2)

    def remove(self) -> None:
        _docker("rm", "-f", self.id, check=False)


@pytest.fixture(scope="module")
def container(image: str, redis_url: str) -> Iterator[Container]:
    running = Container(image, redis_url)
    try:
        FIGURES["start_to_healthz_seconds"] = round(running.wait_for("/healthz"), 2)
        yield running
    finally:
        running.remove()
        out = REPO / "build" / "image-test.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(FIGURES, indent=2) + "\n")
        print(f"\nimage-test figures: {json.dumps(FIGURES)}")


def test_health_and_readiness(container: Container) -> None:
    assert requests.get(container.url + "/healthz", timeout=10).status_code == 200
    container.wait_for("/readyz")
    deadline = time.monotonic() + 120  # the image's HEALTHCHECK: first run after 15 s
    while (status := container.state(".State.Health.Status")) != "healthy":
        assert status == "starting", f"HEALTHCHECK says {status}:\n{container.logs()}"
        assert time.monotonic() < deadline, "the HEALTHCHECK never passed"
        time.sleep(1)
    FIGURES["start_to_docker_healthy_seconds"] = round(time.monotonic() - container.started, 1)


def test_a_game_is_created_and_moves_are_played(container: Container) -> None:
    game = LiveGame.create(container.url, players=2)
    before = game.public()["version"]
    for _ in range(3):
        assert game.step()
    assert game.public()["version"] > before


def test_runs_as_non_root_on_a_read_only_root(container: Container) -> None:
    assert container.state(".Config.User") == f"{APP_UID}:{APP_UID}"
    assert container.state(".HostConfig.ReadonlyRootfs") == "true"
    assert _docker("exec", container.id, "id", "-u") == str(APP_UID)
    write = subprocess.run(
        ["docker", "exec", container.id, "python", "-c", "open('/opt/venv/x', 'w')"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert write.returncode != 0 and "Read-only file system" in write.stderr, write.stderr


def test_sigterm_answers_a_long_poll_and_the_container_exits(container: Container) -> None:
    created = requests.post(
        container.url + "/v1/games", json={"players": [{"name": "a"}, {"name": "b"}]}, timeout=10
    )
    assert created.status_code == 201, created.text
    events = f"{container.url}/v1/games/{created.json()['id']}/events"
    page = requests.get(events, timeout=10).json()
    last, last_id = page["last_seq"], page["last_id"]
    answers: dict[str, Any] = {}

    def long_poll() -> None:
        try:
            query = {"after": last_id, "wait": 30}
            answers["poll"] = requests.get(events, params=query, timeout=60)
        except requests.RequestException as exc:
            answers["error"] = exc
        answers["at"] = time.monotonic()

    poller = threading.Thread(target=long_poll, daemon=True)
    poller.start()
    time.sleep(2)  # let the poll reach a worker and wait there
    assert not answers, "the long poll returned before the game changed or SIGTERM"
    stopped = time.monotonic()
    _docker("kill", "--signal", "SIGTERM", container.id)
    exit_code = _docker("wait", container.id, timeout=90)
    FIGURES["sigterm_to_exit_seconds"] = round(time.monotonic() - stopped, 2)
    poller.join(30)
    assert "error" not in answers, (answers.get("error"), container.logs())
    assert answers["poll"].status_code == 200
    assert answers["poll"].json() == {"events": [], "last_seq": last, "last_id": last_id}
    FIGURES["sigterm_to_long_poll_answer_seconds"] = round(answers["at"] - stopped, 2)
    assert answers["at"] - stopped < 15, "the long poll waited on after SIGTERM"
    assert exit_code == "0", container.logs()
    assert FIGURES["sigterm_to_exit_seconds"] < 30
