"""docs/API.md's EventSource example listens for every event type the service emits
(EventSource hands a typed event only to a listener of that type), and its streams
open as the service opens them."""

from __future__ import annotations

import re
from pathlib import Path

from service.api.event_frames import RETRY_MILLISECONDS

ROOT = Path(__file__).resolve().parents[1]


def test_the_eventsource_example_listens_for_every_event_type() -> None:
    emitted = set()
    for path in (ROOT / "service").rglob("*.py"):
        emitted |= set(re.findall(r"\bEvent\(\s*\"([a-z_]+)\"", path.read_text()))
    assert {"game_created", "drew", "game_finished"} <= emitted, "the search finds them"
    doc = (ROOT / "docs" / "API.md").read_text()
    listed = re.search(r"const TYPES = \[([^\]]*)\]", doc)
    assert listed, "docs/API.md lists the event types in its EventSource example"
    assert set(re.findall(r"\"([a-z_]+)\"", listed.group(1))) == emitted


def test_the_documented_opening_frames_are_the_streams() -> None:
    """docs/API.md shows the SSE stream's opening `retry:` hint as the service sends it
    and warns that it, and NDJSON's opening empty line, carry no event."""
    doc = (ROOT / "docs" / "API.md").read_text()
    assert f"```\n  retry: {RETRY_MILLISECONDS}\n" in doc
    assert f"The first frame, `retry: {RETRY_MILLISECONDS}`, carries no event" in doc
    assert "and so is the first line" in doc  # NDJSON
