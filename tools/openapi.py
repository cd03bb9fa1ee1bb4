"""Write the OpenAPI document the app serves: ``python -m tools.openapi [PATH]``.

``make openapi`` writes ``openapi/openapi.json``; a test fails when the
committed file differs from what the app serves.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from service.app import create_app
from service.config import Config

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "openapi" / "openapi.json"


def spec_text(spec: dict[str, Any]) -> str:
    """The canonical text of a spec: sorted keys, two-space indent, final newline."""
    return json.dumps(spec, indent=2, sort_keys=True) + "\n"


def served_spec() -> dict[str, Any]:
    logging.getLogger("service").setLevel(logging.ERROR)
    app = create_app(Config())
    spec: dict[str, Any] = app.test_client().get("/openapi.json").get_json()
    return spec


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else DEFAULT_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(spec_text(served_spec()))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
