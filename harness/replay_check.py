"""Replaying a played game from its public events, and checking the result against Redis.

:func:`verify_game` pages through a game's public event log, replays it through the
engine from the seed (``State.new(Game(n, options), seed_from_client(seed))``) and
checks that it reproduces exactly the state and results stored in Redis and the
totals, results and winners of the public view; event seqs must strictly increase.
The soak (``bench/soak.py``) and the fault tests run it on every game they played.
"""

from __future__ import annotations

from typing import Any

import orjson
import redis
import requests

from service.engine.cards import Card
from service.engine.codec import state_to_compact
from service.engine.moves import Discard, Draw, GoOut, Move, Source
from service.engine.options import Options
from service.engine.rules import Game
from service.engine.shuffle import seed_from_client
from service.engine.state import State
from service.hosting.record import GameRecord
from service.store.keys import STATE, key


def moves_from_events(events: list[dict[str, Any]]) -> list[tuple[int, Move]]:
    """The moves recorded in a game's public event log, in order."""
    moves: list[tuple[int, Move]] = []
    for event in events:
        kind = event["type"]
        if event.get("private"):
            continue
        if kind == "drew":
            moves.append((event["seat"], Draw(Source(event["source"]))))
        elif kind == "discarded":
            moves.append((event["seat"], Discard(Card.parse(event["card"]))))
        elif kind == "went_out":
            melds = tuple(tuple(Card.parse(c) for c in m["cards"]) for m in event["melds"])
            moves.append((event["seat"], GoOut(Card.parse(event["discard"]), melds)))
        elif kind == "go_out_refused":
            raise ValueError("a refused go-out claim cannot be replayed from public events")
    return moves


def replay(events: list[dict[str, Any]], view: dict[str, Any], seed: str) -> State | None:
    """The engine state obtained by replaying ``events`` from the seed (None before the deal)."""
    if not any(e["type"] == "game_started" for e in events):
        return None
    options = Options.from_dict(view["options"])
    state = State.new(Game(len(view["players"]), options), seed_from_client(seed))
    for seat, move in moves_from_events(events):
        state.apply(seat, move)
    return state


def all_events(session: requests.Session, base: str, game_id: str) -> list[dict[str, Any]]:
    """Every public event of a game (paging through ``after``)."""
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        r = session.get(f"{base}/v1/games/{game_id}/events", params={"after": after}, timeout=10)
        r.raise_for_status()
        body = r.json()
        out += body["events"]
        if not body["events"] or body["last_seq"] <= after:
            return out
        after = body["last_seq"]


def verify_game(
    client: redis.Redis, session: requests.Session, base: str, game_id: str, seed: str
) -> tuple[list[str], dict[str, Any]]:
    """Check that a game's events replay to its stored state; returns (problems, public view)."""
    problems: list[str] = []
    r = session.get(f"{base}/v1/games/{game_id}", timeout=10)
    if r.status_code != 200:
        return [f"{game_id}: GET answered {r.status_code}"], {}
    view = r.json()
    events = all_events(session, base, game_id)
    seqs = [e["seq"] for e in events]
    if seqs != sorted(set(seqs)):
        problems.append(f"{game_id}: event seqs not strictly increasing")
    raw_doc = client.hget(key(game_id, STATE), "d")
    if raw_doc is None:
        return [f"{game_id}: no stored document"], view
    doc = orjson.loads(raw_doc)
    try:
        state = replay(events, view, seed)
    except Exception as exc:  # an illegal move in the log is a finding, not a crash
        return [f"{game_id}: replay failed: {type(exc).__name__}: {exc}"], view
    if state is None:
        if doc["state"] is not None:
            problems.append(f"{game_id}: stored state without a game_started event")
        return problems, view
    raw_results = client.hget(key(game_id, STATE), "r")
    stored = GameRecord.loaded(raw_doc, raw_results).state  # whatever the document's format
    if stored is None or (state_to_compact(state), state.game, state.seed) != (
        state_to_compact(stored),
        stored.game,
        stored.seed,
    ):
        problems.append(f"{game_id}: replayed state differs from the stored state")
    stored_results = orjson.loads(raw_results or b"null")
    if stored_results != state.results.dicts():
        problems.append(f"{game_id}: replayed results differ from the stored results")
    if [p["total"] for p in view["players"]] != state.totals:
        problems.append(f"{game_id}: totals differ from the replay")
    if [res["number"] for res in view["results"]] != [res.number for res in state.results]:
        problems.append(f"{game_id}: results differ from the replay")
    if view["status"] == "finished" and view["winners"] != state.winners:
        problems.append(f"{game_id}: winners differ from the replay")
    return problems, view
