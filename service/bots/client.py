"""Reference bot client: plays one seat of a hosted game over HTTP.

    three-thirteen-bot --url http://127.0.0.1:8000 --game ID --token TOKEN --level basic

It uses only the public API and the standard library:

- ``GET /v1/games/{id}/events?after=N&wait=S`` (long poll, with the seat's
  token) to wait for something to happen; the public events it reads are the
  brain's ``history``;
- ``GET /v1/games/{id}/view`` for the seat's view (hand, legal moves, version);
- ``POST /v1/games/{id}/moves`` with ``If-Match: "<version>"`` and an
  ``Idempotency-Key`` (kept across retries of the same move).

503 and 429 are retried after ``Retry-After``; 412 and 409 (the game moved on,
or it is not our turn after all) re-read the view and decide again; network
errors are retried with a growing pause.  It stops when the game is finished
and prints a short log line per move.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from service import bots

USER_AGENT = "three-thirteen-bot/1"


class ApiProblem(Exception):
    """An HTTP error answer from the service."""

    def __init__(self, status: int, body: dict[str, Any], retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}: {body.get('code')} {body.get('detail')}")
        self.status = status
        self.body = body
        self.retry_after = retry_after


@dataclass
class Client:
    """A thin JSON-over-HTTP client of one game, acting for one seat."""

    base_url: str
    game_id: str
    token: str
    timeout: float = 40.0
    network_retries: int = 8

    def _request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        url = self.base_url.rstrip("/") + path
        data = None if body is None else json.dumps(body).encode()
        all_headers = {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            **(headers or {}),
        }
        if data is not None:
            all_headers["Content-Type"] = "application/json"
        pause = 0.2
        for attempt in range(self.network_retries + 1):
            req = urllib.request.Request(url, data=data, headers=all_headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=timeout or self.timeout) as resp:
                    result: dict[str, Any] = json.loads(resp.read() or b"{}")
                    return result
            except urllib.error.HTTPError as exc:
                raw = exc.read()
                try:
                    problem = json.loads(raw) if raw else {}
                except ValueError:
                    problem = {"detail": raw[:200].decode(errors="replace")}
                retry = exc.headers.get("Retry-After") if exc.headers else None
                try:
                    retry_after = float(retry) if retry is not None else None
                except ValueError:
                    retry_after = None
                raise ApiProblem(exc.code, problem, retry_after) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError):
                if attempt == self.network_retries:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 5.0)
        raise AssertionError("unreachable")

    @property
    def _game(self) -> str:
        return "/v1/games/" + urllib.parse.quote(self.game_id, safe="")

    def view(self) -> dict[str, Any]:
        return self._request("GET", self._game + "/view")

    def events(self, after: int, wait: float) -> dict[str, Any]:
        query = urllib.parse.urlencode({"after": after, "wait": int(wait)})
        return self._request("GET", f"{self._game}/events?{query}", timeout=wait + self.timeout)

    def move(self, move: dict[str, Any], version: int, key: str) -> dict[str, Any]:
        headers = {"If-Match": f'"{version}"', "Idempotency-Key": key}
        return self._request("POST", self._game + "/moves", move, headers)


@dataclass
class Player:
    """Plays a seat to the end of the game with a brain of some level."""

    client: Client
    level: str
    rng: random.Random
    wait: float = 20.0
    log: Callable[[str], None] = print
    max_retries: int = 30
    after: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    moves_made: int = 0

    def _read_events(self, wait: float) -> None:
        answer = self.client.events(self.after, wait)
        for event in answer.get("events", []):
            if not event.get("private"):
                self.history.append(event)
        self.after = max(self.after, int(answer.get("last_seq", self.after)))

    def _my_turn(self, view: dict[str, Any]) -> bool:
        rnd = view.get("round")
        return bool(
            view.get("status") == "playing"
            and rnd is not None
            and rnd.get("turn") == view.get("seat")
            and view.get("legal_moves")
        )

    def play(self) -> dict[str, Any]:
        """Play until the game is finished; returns the final view."""
        view = self.client.view()
        self.log(f"seat {view.get('seat')} in game {self.client.game_id} as a {self.level} bot")
        retries = 0
        while view.get("status") != "finished":
            if not self._my_turn(view):
                self._read_events(self.wait)
                view = self.client.view()
                continue
            self._read_events(0)
            choice = bots.decide(self.level, view, self.rng, history=self.history)
            body = choice.to_dict()
            key = uuid.uuid4().hex
            while True:
                try:
                    view = self.client.move(body, view["version"], key)
                    self.moves_made += 1
                    rnd = view.get("round") or {}
                    self.log(f"round {rnd.get('number', '-')}: {choice}")
                    retries = 0
                    break
                except ApiProblem as problem:
                    retries += 1
                    if retries > self.max_retries:
                        raise
                    if problem.status in (503, 429):
                        time.sleep(min(problem.retry_after or 1.0, 10.0))
                        continue  # same move, same key: safe to repeat
                    if problem.status in (409, 412, 422):
                        # The game moved on (or our picture of it was stale): look again.
                        self.log(f"  {problem.status} {problem.body.get('code')}: re-reading")
                        view = self.client.view()
                        break
                    raise
        totals = [p.get("total") for p in view.get("players", [])]
        winners = view.get("winners") or []
        mine = view.get("seat")
        self.log(
            f"game finished after {self.moves_made} moves: totals {totals}, winners {winners}"
            + (" (we won)" if mine in winners else "")
        )
        return view


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="three-thirteen-bot", description="Play one seat of a hosted game with a bot."
    )
    parser.add_argument("--url", required=True, help="service base URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--game", required=True, help="game id")
    parser.add_argument("--token", required=True, help="the seat's bearer token")
    parser.add_argument("--level", default="basic", choices=bots.LEVELS, help="bot level")
    parser.add_argument("--wait", type=float, default=20.0, help="long-poll seconds (max 30)")
    parser.add_argument("--seed", default=None, help="seed of the bot's own random choices")
    parser.add_argument("--quiet", action="store_true", help="print only the final line")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    lines: list[str] = []

    def log(line: str) -> None:
        lines.append(line)
        if not args.quiet or line.startswith("game finished"):
            print(line, flush=True)

    player = Player(
        Client(args.url, args.game, args.token),
        args.level,
        random.Random(args.seed),
        wait=min(max(args.wait, 0.0), 30.0),
        log=log,
    )
    try:
        player.play()
    except ApiProblem as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    except urllib.error.URLError as exc:
        print(f"error: cannot reach {args.url}: {exc.reason}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
