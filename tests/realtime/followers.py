"""Following a real server's stream in a test: :class:`Follower` keeps every frame."""

from __future__ import annotations

import threading
import time
from typing import Any

import requests

from harness.live_game import LiveGame
from harness.sse import Frame, frames

SSE = {"Accept": "text/event-stream"}


class Follower:
    """Reads a stream on a thread of its own, keeping every frame it gets."""

    def __init__(self, url: str, headers: dict[str, str], params: Any = None) -> None:
        self.response = requests.get(url, headers=headers, params=params, stream=True, timeout=30)
        self.frames: list[Frame] = []
        self.ended = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for frame in frames(self.response):
                self.frames.append(frame)
        except (requests.RequestException, AttributeError, ValueError):
            pass  # closed by the test (urllib3 then finds its socket gone)
        finally:
            self.ended.set()

    def events(self) -> list[dict[str, Any]]:
        return [frame.json() for frame in self.frames if frame.kind == "event"]

    def wait_for(self, seq: int, timeout: float = 10) -> None:
        """Until an event with ``seq`` or more arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(e["seq"] >= seq for e in self.events()):
                return
            time.sleep(0.02)
        raise AssertionError(f"no event {seq} within {timeout} s: {self.events()[-3:]}")

    def close(self) -> None:
        self.response.close()


def last_seq(game: LiveGame) -> int:
    return max(e["seq"] for e in game.events(0) + game.events(1))
