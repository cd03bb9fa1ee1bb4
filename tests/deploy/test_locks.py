"""The lock files agree with pyproject.toml and with each other: every declared
dependency is pinned, at a version its range admits (else: run `make lock`), and the
development lock pins every package of the runtime lock at the same version."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.deploy.files import REPO
from tests.deploy.runtime_set import DEV_LOCK, RUNTIME_LOCK, normalize, pins

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _declared(requirements: list[str]) -> list[Requirement]:
    return [Requirement(line) for line in requirements]


@pytest.mark.parametrize(
    ("declared", "lock"),
    [
        (PROJECT["dependencies"], RUNTIME_LOCK),
        (PROJECT["dependencies"] + PROJECT["optional-dependencies"]["dev"], DEV_LOCK),
    ],
    ids=["runtime", "dev"],
)
def test_every_declared_dependency_is_pinned_within_its_range(
    declared: list[str], lock: Path
) -> None:
    pinned = pins(lock)
    for requirement in _declared(declared):
        name = normalize(requirement.name)
        assert name in pinned, f"{requirement} is not in {lock}: run `make lock`"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"{lock} pins {name}=={pinned[name]}, outside {requirement}: run `make lock`"
        )


def test_the_dev_lock_pins_the_runtime_set_at_the_same_versions() -> None:
    runtime, dev = pins(RUNTIME_LOCK), pins(DEV_LOCK)
    differ = {name: (version, dev.get(name)) for name, version in runtime.items()}
    assert {n: v for n, v in differ.items() if v[0] != v[1]} == {}


def test_every_pin_carries_hashes() -> None:
    for lock in (RUNTIME_LOCK, DEV_LOCK):
        blocks = lock.read_text().split("\n")
        pinned = [line for line in blocks if "==" in line and not line.startswith(("#", " "))]
        assert pinned and all(line.endswith("\\") for line in pinned), lock
