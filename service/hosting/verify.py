"""``three-thirteen-verify``: check a finished game's replay with the engine.

    three-thirteen-verify replay.json
    three-thirteen-verify --url http://127.0.0.1:8000 --game <id>

Exit status 0 when the seed matches its commitment and re-simulating the
actions reproduces every deal, move, score and winner; 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from typing import Any

from service.hosting.replays import verify_replay


def fetch(url: str, game: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url.rstrip('/')}/v1/games/{game}/replay", timeout=30) as r:
        data: dict[str, Any] = json.load(r)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", nargs="?", help="a replay saved as JSON")
    parser.add_argument("--url", help="base URL of the service")
    parser.add_argument("--game", help="game id (with --url)")
    args = parser.parse_args(argv)
    if args.file:
        with open(args.file) as f:
            replay = json.load(f)
    elif args.url and args.game:
        replay = fetch(args.url, args.game)
    else:
        parser.error("give a replay file, or --url and --game")
    problems = verify_replay(replay)
    if problems:
        for problem in problems:
            print(f"REJECTED: {problem}")
        return 1
    print(
        f"verified: game {replay.get('id')} — {len(replay['deals'])} deals, "
        f"{len(replay['actions'])} actions, winners {replay['winners']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
