"""The games the HTTP benchmark stores and the in-process cost of a view.

Games are played in-process with the engine (greedy players) to the start of
their last round, copied with new ids, tokens and a fresh deal of that round,
and written through ``GameStore.create``; the copies can be read back from
Redis (version, turn, phase, card to discard), copied to another Redis,
topped up with filler games, and measured (``MEMORY USAGE``).  ``view_cost``
times ``observe(state, seat)`` for 14-card hands.
"""

from __future__ import annotations

import gc
import statistics
import time
from typing import Any

import redis

from service.engine.moves import Discard, Draw, Source
from service.engine.rounds import Phase
from service.engine.shuffle import new_seed
from service.engine.solver import best_arrangement
from service.engine.state import legal_moves
from service.engine.view import observe
from service.hosting.record import GameRecord
from service.hosting.seating import create_record, issue_token
from service.hosting.snapshots import events_payload, snapshot
from service.hosting.timers import automatic_finish
from service.hosting.tokens import new_game_id
from service.store import GameStore, key
from service.store.keys import EVENTS, STATE


def game_at_last_round(players: int) -> tuple[GameRecord, dict[int, str], list[Any]]:
    """A fresh game played in-process (greedy players) to the start of its last round.

    A round in which the greedy players never go out is abandoned after
    ``MAX_TURNS`` turns and a new game is dealt (rare, but it must not hang).
    """
    while True:
        found = _try_last_round(players)
        if found is not None:
            return found


MAX_TURNS = 3000


def _try_last_round(players: int) -> tuple[GameRecord, dict[int, str], list[Any]] | None:
    record, tokens, events = create_record(
        [{"name": f"p{i}"} for i in range(players)], None, "classic", {}, None, False
    )
    state = record.state
    assert state is not None
    last = len(state.game.rounds)
    turns = 0
    while state.round is not None and state.spec.number < last:
        turns += 1
        if turns > MAX_TURNS:
            return None
        seat = state.round.turn
        if state.round.phase is Phase.DRAW:
            events += record.play(seat, Draw(Source.STOCK))
        else:
            events += record.play(seat, automatic_finish(state, seat))  # greedy
    assert state.round is not None and state.round.phase is Phase.DRAW
    return record, tokens, events


def clone(template: GameRecord, events: list[Any]) -> tuple[GameRecord, dict[int, str], list[Any]]:
    """A copy of ``template`` (a game at the start of a round) with a new id, new
    tokens, and that round dealt again from a seed of its own: the copies of one
    played game share its history but no hand, as unrelated games would (with
    the same hands, a worker would find most hands of a copy already solved).
    ``events`` (the template's) end with that round's deal, which is replaced."""
    record = GameRecord.from_bytes(template.to_bytes(), template.results_json())
    record.id = new_game_id()
    tokens = {}
    for seat in record.seats:
        tokens[seat.seat] = issue_token(seat)
    state = record.state
    assert state is not None and state.round is not None and state.round.turns_taken == 0
    record.seed = state.seed = new_seed()
    dealt_at = max(i for i, e in enumerate(events) if e.type == "round_started")
    deal = state.deal(state.round.index, state.round.dealer)  # the engine's own dealing
    return record, tokens, events[:dealt_at] + deal


def create_hot_games(store: GameStore, count: int, templates: int) -> list[dict[str, Any]]:
    """``count`` 2-player games at the last round, stored through the store, each
    dealt its own hands (copies of ``templates`` played games)."""
    bases = [game_at_last_round(2) for _ in range(templates)]
    games = []
    for i in range(count):
        template, _tokens, template_events = bases[i % templates]
        record, tokens, events = clone(template, template_events)
        store.create(record.id, record.to_bytes(), events_payload(events), **snapshot(record, 1))
        games.append({"id": record.id, "n": 2, "tokens": [tokens[0], tokens[1]]})
    return games


def refresh(client: redis.Redis, games: list[dict[str, Any]]) -> None:
    """Read each game's version, turn, phase (and a card to discard) back from Redis."""
    pipe = client.pipeline(transaction=False)
    for g in games:
        pipe.hmget(key(g["id"], STATE), "v", "d", "r")
    for g, (version, doc, results) in zip(games, pipe.execute(), strict=True):
        record = GameRecord.from_bytes(doc, results)
        rnd = record.state.round if record.state else None
        g["v"] = int(version)
        g["turn"] = rnd.turn if rnd else 0
        g["phase"] = rnd.phase.value if rnd else "over"
        g["card"] = ""
        if rnd and rnd.phase is Phase.DISCARD:  # as the load generators pick it
            known = record.arrangements.get(rnd.turn)
            deadwood = known[1]["deadwood"] if known else []
            g["card"] = deadwood[0] if deadwood else rnd.hands[rnd.turn][0].code


def copy_games(
    source: redis.Redis, dest: redis.Redis, games: list[dict[str, Any]], ttl_seconds: int
) -> None:
    """Copy the games (state hash and event stream) to another Redis, as they are."""
    names = [key(g["id"], part) for g in games for part in (STATE, EVENTS)]
    for i in range(0, len(names), 500):
        batch = names[i : i + 500]
        pipe = source.pipeline(transaction=False)
        for name in batch:
            pipe.dump(name)
        dumps = pipe.execute()
        pipe = dest.pipeline(transaction=False)
        for name, dumped in zip(batch, dumps, strict=True):
            pipe.restore(name, ttl_seconds * 1000, dumped)
        pipe.execute()


def add_filler(client: redis.Redis, store: GameStore, total: int, present: int) -> int:
    """Bring the number of stored games to ``total`` with copies of one fresh 2-player game."""
    record, _tokens, events = create_record(
        [{"name": "a"}, {"name": "b"}], None, "classic", {}, None, False
    )
    store.create(record.id, record.to_bytes(), events_payload(events), **snapshot(record, 1))
    state_dump = client.dump(key(record.id, STATE))
    events_dump = client.dump(key(record.id, EVENTS))
    ttl_ms = store.game_ttl_seconds * 1000
    made = 1
    need = total - present - 1
    batch = 2000
    while made <= need:
        pipe = client.pipeline(transaction=False)
        for _ in range(min(batch, need - made + 1)):
            gid = new_game_id()
            pipe.restore(key(gid, STATE), ttl_ms, state_dump)
            pipe.restore(key(gid, EVENTS), ttl_ms, events_dump)
            made += 1
        pipe.execute()
    return made


def game_bytes(client: redis.Redis, game_id: str) -> dict[str, int]:
    state = int(client.memory_usage(key(game_id, STATE), samples=0) or 0)
    events = int(client.memory_usage(key(game_id, EVENTS), samples=0) or 0)
    return {
        "state_bytes": state,
        "events_bytes": events,
        "total_bytes": state + events,
        "events": int(client.xlen(key(game_id, EVENTS))),
        "document_bytes": len(client.hget(key(game_id, STATE), "d") or b""),
        "results_bytes": len(client.hget(key(game_id, STATE), "r") or b""),
    }


# --------------------------------------------------------------------------- in-process view cost


def view_cost(positions: int, templates: int) -> dict[str, Any]:
    """Time observe(state, seat) for the seat to discard with 14 cards (one call each)."""
    samples: dict[str, list[float]] = {"observe": [], "legal_moves": [], "arrangement": []}
    public: list[float] = []
    hand_sizes = set()
    per_template = max(1, positions // templates)
    players_cycle = (2, 4, 8)
    for t in range(templates):
        record, _tokens, _events = game_at_last_round(players_cycle[t % len(players_cycle)])
        state = record.state
        assert state is not None
        for _ in range(per_template):
            rnd = state.round
            if rnd is None:
                break
            seat = rnd.turn
            state.apply(seat, Draw(Source.STOCK))
            hand_sizes.add(len(rnd.hands[seat]))
            gc.disable()
            t0 = time.perf_counter()
            observe(state, seat)
            t1 = time.perf_counter()
            legal_moves(state, seat)
            t2 = time.perf_counter()
            best_arrangement(rnd.hands[seat], state.spec.wild_rank, state.game.options)
            t3 = time.perf_counter()
            observe(state, None)
            t4 = time.perf_counter()
            gc.enable()
            samples["observe"].append((t1 - t0) * 1000)
            samples["legal_moves"].append((t2 - t1) * 1000)
            samples["arrangement"].append((t3 - t2) * 1000)
            public.append((t4 - t3) * 1000)
            move = Discard(rnd.hands[seat][0])  # keep the round going: never go out
            state.apply(seat, move)
    out: dict[str, Any] = {"positions": len(public), "hand_sizes": sorted(hand_sizes)}
    for name, values in (*samples.items(), ("observe_public", public)):
        values.sort()
        out[name] = {
            "median_ms": statistics.median(values),
            "p99_ms": values[min(len(values) - 1, int(len(values) * 0.99))],
            "max_ms": values[-1],
        }
    return out
