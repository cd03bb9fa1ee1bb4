"""A store script whose first reply is lost, for tests of retried writes."""

from __future__ import annotations

from typing import Any


class LostReply:
    """A store script whose first reply is lost: it runs, and is run again with the
    same arguments -- what redis-py's retry does after a read timeout."""

    def __init__(self, script: Any) -> None:
        self.script = script

    def __call__(self, keys: list[Any], args: list[Any]) -> Any:
        self.script(keys=keys, args=args)
        return self.script(keys=keys, args=args)
