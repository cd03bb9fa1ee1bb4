"""deploy/Dockerfile, read as text: its stages, what it installs, the user it runs as,
its health check and command, and the build context .dockerignore lets through."""

from __future__ import annotations

import json
import re
import shlex

from tests.deploy.files import APP_UID, DOCKERFILE, DOCKERIGNORE, PORT, REPO, WSGI_APP, manifest


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


def test_dockerfile_is_multi_stage_on_python_311_slim() -> None:
    stages = _stages()
    assert len(stages) >= 2, "expected a builder stage and a runtime stage"
    image = stages[-1][0][1].split()[0]
    for name, value in _global_args().items():
        image = image.replace("${" + name + "}", value).replace("$" + name, value)
    assert image == "python:3.11-slim"
    runtime = stages[-1]
    assert any(i == "COPY" and a.startswith("--from=") for i, a in runtime), (
        "runtime stage should copy the venv from the builder"
    )


def test_dockerfile_installs_the_runtime_lock_then_the_wheel() -> None:
    runs = " ".join(a for i, a in _dockerfile_instructions() if i == "RUN")
    assert "deploy/runtime-venv.sh deps /opt/venv" in runs
    assert "deploy/runtime-venv.sh project /opt/venv" in runs
    script = (REPO / "deploy" / "runtime-venv.sh").read_text()
    assert "--require-hashes -r requirements/runtime.txt" in script
    assert "pip wheel -q --no-deps" in script and "pip install -q --no-deps" in script
    for text in (runs, script):
        assert "[dev]" not in text and ".[" not in text, "the image must not install extras"
        assert not re.search(r"pip install\s+(-e|--editable)\b", text)


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
    pod_sc = manifest("Deployment")["spec"]["template"]["spec"]["securityContext"]
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
