"""Fixtures of the real-time tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.realtime.followers import Follower


@pytest.fixture
def follow() -> Iterator[Callable[..., Follower]]:
    opened: list[Follower] = []

    def start(url: str, headers: dict[str, str], params: Any = None) -> Follower:
        follower = Follower(url, headers, params)
        opened.append(follower)
        return follower

    yield start
    for follower in opened:
        follower.close()
