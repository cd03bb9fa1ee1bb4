"""What the real-time benchmark checks and derives once the waiters are done.

* :func:`reference` reads a game's full event list as one client sees it (no
  token: the public events; a seat's token: those plus the seat's private
  ones) with the long poll at ``wait=0``, paging with ``after``.
* :func:`verify` compares what a waiter received with that list: every event,
  in order, exactly once (same seq and same JSON, by CRC).
* :func:`move_groups` and :func:`latencies` tie each event to the move that
  produced it, and each waiter's receipt to that move's 200 at the mover.
"""

from __future__ import annotations

import asyncio
import bisect
from collections import Counter
from typing import Any

import orjson

from bench._rt_movers import Game, Movers
from bench._rt_waiters import digest
from service.store import key
from service.store.keys import EVENTS

READ_RETRIES = 120

MOVE_OPENERS = {"drew": "draw", "discarded": "discard", "went_out": "go_out"}
"""The public event each move starts with (a draw that reshuffles starts with
``stock_reshuffled``); what follows it up to the next opener is that move's too."""


async def reference(movers: Movers, game: str, token: str | None) -> list[tuple[int, int, str]]:
    """``(seq, crc, type)`` of every event of ``game`` that ``token`` (None: anyone) sees."""
    out: list[tuple[int, int, str]] = []
    after = 0
    tries = 0
    while True:
        path = f"/v1/games/{game}/events?after={after}&wait=0"
        answer, _ = await movers.call("GET", path, token)
        if answer.status in (429, 503) and tries < READ_RETRIES:
            tries += 1
            movers.errors[f"reference read {answer.status} (retried)"] += 1
            await asyncio.sleep(0.5)
            continue
        if answer.status != 200:
            raise RuntimeError(f"events of {game}: {answer.status} {answer.body[:200]!r}")
        page = orjson.loads(answer.body)
        out += [(int(e["seq"]), digest(e), e["type"]) for e in page["events"]]
        if int(page["last_seq"]) <= after:
            return out
        after = int(page["last_seq"])


def stored_references(
    client: Any, wanted: set[tuple[str, int | None]]
) -> dict[tuple[str, int | None], list[tuple[int, int, str]]]:
    """What :func:`reference` reads, from the game's event stream in Redis itself
    (field ``seat``: "" public, "N" private to seat N), for ``(game, seat)`` pairs
    (seat None: public only).  The store's own log: independent of the HTTP path
    under test, and fast while the server is loaded."""
    games = sorted({game for game, _seat in wanted})
    pipe = client.pipeline(transaction=False)
    for game in games:
        pipe.xrange(key(game, EVENTS))
    entries = dict(zip(games, pipe.execute(), strict=True))
    out = {}
    for game, seat in wanted:
        mine = b"" if seat is None else str(seat).encode()
        rows = []
        for entry_id, fields in entries[game]:
            if fields.get(b"seat", b"") in (b"", mine):
                event = {"seq": int(entry_id.split(b"-", 1)[0]), **orjson.loads(fields[b"e"])}
                rows.append((event["seq"], digest(event), event["type"]))
        out[(game, seat)] = rows
    return out


LAG = "behind at the end (not delivered yet)"


def verify(received: dict[str, Any], expected: list[tuple[int, int, str]]) -> Counter[str]:
    """Violations of "every event, in order, exactly once" for one waiter.

    An event it never got is a gap when a later one arrived, else the waiter
    is behind (still retrying, say) when the run ends: counted apart (LAG)."""
    found: Counter[str] = Counter()
    seqs, crcs = received["seqs"], received["crcs"]
    want = {seq: crc for seq, crc, _type in expected}
    seen: set[int] = set()
    last = 0
    for seq, crc in zip(seqs, crcs, strict=True):
        if seq in seen:
            found["duplicate"] += 1
        elif seq < last:
            found["out of order"] += 1
        if seq not in want:
            found["not visible to this client"] += 1
        elif want[seq] != crc:
            found["content differs"] += 1
        seen.add(seq)
        last = max(last, seq)
    absent = want.keys() - seen
    found["missing (a later event arrived)"] += sum(seq < last for seq in absent)
    found[LAG] += sum(seq > last for seq in absent)
    return +found


def move_groups(public: list[tuple[int, int, str]]) -> tuple[list[int], list[str]]:
    """The seq each move's events start at, and the move type it implies, in order."""
    starts: list[int] = []
    kinds: list[str] = []
    previous = ""
    for seq, _crc, kind in public:
        if kind == "stock_reshuffled":
            starts.append(seq)
            kinds.append("draw")
        elif kind in MOVE_OPENERS and not (kind == "drew" and previous == "stock_reshuffled"):
            starts.append(seq)
            kinds.append(MOVE_OPENERS[kind])
        previous = kind
    return starts, kinds


def move_times(game: Game, public: list[tuple[int, int, str]]) -> tuple[list[int], list[float]]:
    """For each move of ``game``: the seq its events start at and when its 200 arrived.

    Empty when the events do not line up with the moves that got a 200 (a
    move that acted but whose answer was lost, say): such a game gives no
    latency samples rather than wrong ones."""
    starts, kinds = move_groups(public)
    if kinds != [kind for _t, kind in game.moves]:
        return [], []
    return starts, [t for t, _kind in game.moves]


def latencies(
    received: dict[str, Any], starts: list[int], answered: list[float], since: float
) -> tuple[list[float], int]:
    """Delivery latency (ms) per move made after ``since`` whose events this waiter got:
    from the move's 200 at the mover to the receipt of the last of its events here
    (clamped at 0), and how many arrived before the 200 did."""
    last_receipt: dict[int, float] = {}
    for seq, t in zip(received["seqs"], received["times"], strict=True):
        k = bisect.bisect_right(starts, seq) - 1
        if k >= 0 and answered[k] >= since:
            last_receipt[k] = max(t, last_receipt.get(k, t))
    out = []
    early = 0
    for k, t in last_receipt.items():
        delta = (t - answered[k]) * 1000
        early += delta < 0
        out.append(max(0.0, delta))
    return out, early


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]
