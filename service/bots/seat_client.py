"""Reference bot client: plays one seat of a hosted game over HTTP.

    three-thirteen-bot --url http://127.0.0.1:8000 --game ID --token TOKEN --level basic

It uses only the public API and the standard library:

- ``GET /v1/games/{id}/events`` as Server-Sent Events (``Accept: text/event-stream``,
  the seat's token in ``Authorization``) to follow the game: every event of the
  seat arrives once, in order, and the public ones are the brain's ``history``.
  A stream that ends (the service stopping) or breaks is opened again with
  ``Last-Event-ID`` after the service's ``retry:`` hint (:mod:`service.bots.feed`);
  after a reset (the game's store lost changes it had acknowledged), what came
  after the point the histories share is forgotten and the view read again;
- ``GET /v1/games/{id}/view`` for the seat's view (hand, legal moves, version),
  read whenever events arrived;
- ``POST /v1/games/{id}/moves`` with ``If-Match`` (the ETag of the view it decided
  on) and an ``Idempotency-Key`` (kept across retries of the same move).

Before it decides, it takes every event that has arrived, so the brain sees
the game up to the view it decides on.  503 and 429 are retried after
``Retry-After``; 412 and 409 (the game moved on, or it is not our turn after
all) re-read the view and decide again; network errors are retried with a
growing pause.  It stops when the game is finished and prints a short log
line per move.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from service import bots
from service.bots.api_client import ApiProblem, Client
from service.bots.feed import EventFeed

GAME_OVER = "game_finished"
"""The event of the change that finishes a game (only ``rematch_created`` may follow)."""


@dataclass
class Player:
    """Plays a seat to the end of the game with a brain of some level."""

    client: Client
    level: str
    rng: random.Random
    log: Callable[[str], None] = print
    max_retries: int = 30
    history: list[dict[str, Any]] = field(default_factory=list)
    """The public events so far, oldest first."""
    received: list[int] = field(default_factory=list)
    """The seq of every event the stream delivered (the seat's private ones too)."""
    moves_made: int = 0
    feed: EventFeed | None = None
    etag: str | None = field(default=None, init=False)
    """The ETag of the last view read (or answered to a move): the next move's If-Match."""
    _retries: int = field(default=0, init=False)
    _game_over_seen: bool = field(default=False, init=False)

    def _receive(self, feed: EventFeed, block: bool) -> None:
        for event in feed.take(block=block):
            if event.get("type") == "reset":
                self._forget_after(int(event["shared_seq"]))
                continue
            self.received.append(int(event["seq"]))
            if not event.get("private"):
                self.history.append(event)
            if event.get("type") == GAME_OVER:
                self._game_over_seen = True

    def _forget_after(self, shared_seq: int) -> None:
        """Forget the events after ``shared_seq``: the game's history since is
        another (the view, read next, is that history's)."""
        self.received = [seq for seq in self.received if seq <= shared_seq]
        self.history = [e for e in self.history if int(e["seq"]) <= shared_seq]
        self._game_over_seen = any(e.get("type") == GAME_OVER for e in self.history)

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
        view = self._view()  # a wrong URL or token fails here, not in the feed's retries
        self.log(f"seat {view.get('seat')} in game {self.client.game_id} as a {self.level} bot")
        self.feed = EventFeed(self.client.open_stream, log=self.log)
        with self.feed as feed:
            view = self._follow(feed)
        totals = [p.get("total") for p in view.get("players", [])]
        winners = view.get("winners") or []
        mine = view.get("seat")
        self.log(
            f"game finished after {self.moves_made} moves: totals {totals}, winners {winners}"
            + (" (we won)" if mine in winners else "")
        )
        return view

    def _look(self, feed: EventFeed) -> dict[str, Any]:
        """Wait until something happens (the game so far, at first), take it all, look again."""
        self._receive(feed, block=True)
        return self._view()

    def _view(self) -> dict[str, Any]:
        """Read the seat's view (and keep its ETag)."""
        view, self.etag = self.client.view()
        return view

    def _follow(self, feed: EventFeed) -> dict[str, Any]:
        view = self._look(feed)
        while view.get("status") != "finished":
            if self._my_turn(view):
                self._receive(feed, block=False)
                view, moved = self._move(view)
                if not moved:
                    continue  # refused on a stale view: decide again on the fresh one
            view = self._look(feed)  # the move's own events come next, or the others' moves
        while not self._game_over_seen:  # the rest of the finishing change
            self._receive(feed, block=True)
        return view

    def _move(self, view: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Decide and play one move: (the new view, True), or (a fresh view, False)
        when the service refused it because the game had moved on."""
        choice = bots.decide(self.level, view, self.rng, history=self.history)
        body = choice.to_dict()
        key = uuid.uuid4().hex
        while True:
            try:
                answer, etag = self.client.move(body, self.etag, key)
            except ApiProblem as problem:
                self._retries += 1
                if self._retries > self.max_retries:
                    raise
                if problem.status in (503, 429):
                    time.sleep(min(problem.retry_after or 1.0, 10.0))
                    continue  # same move, same key: safe to repeat
                if problem.status in (409, 412, 422):
                    # The game moved on (or our picture of it was stale): look again.
                    self.log(f"  {problem.status} {problem.body.get('code')}: re-reading")
                    return self._view(), False
                raise
            self.etag = etag
            self.moves_made += 1
            self._retries = 0
            rnd = answer.get("round") or {}
            self.log(f"round {rnd.get('number', '-')}: {choice}")
            return answer, True


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="three-thirteen-bot", description="Play one seat of a hosted game with a bot."
    )
    parser.add_argument("--url", required=True, help="service base URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--game", required=True, help="game id")
    parser.add_argument("--token", required=True, help="the seat's bearer token")
    parser.add_argument("--level", default="basic", choices=bots.LEVELS, help="bot level")
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
        log=log,
    )
    try:
        player.play()
    except ApiProblem as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    except OSError as exc:  # URLError, ConnectionError, TimeoutError
        print(f"error: cannot reach {args.url}: {getattr(exc, 'reason', exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
