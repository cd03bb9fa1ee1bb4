"""The bots' memory bound (BOT_CACHE_MB, service/engine/byte_cache.py) on real
entries: bot games filling every memo past a small budget keep each memo
within its bound and play on to the end; and what the memos count is no less
than what their entries really take (tracemalloc)."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator

import pytest

from service import bots
from service.bots import evaluator
from service.bots.simulate import game_seed
from service.bots.turn_rng import turn_rng
from service.engine import byte_cache, solver
from service.engine.options import Options, preset
from service.engine.rules import Game
from service.engine.shuffle import Shuffler
from service.engine.solver import plan
from service.engine.state import State
from service.engine.view import observe

SMALL = 256 << 10  # a budget the first few hands of a game overflow


@pytest.fixture
def small_budget() -> Iterator[None]:
    before = byte_cache.budget()
    byte_cache.configure(SMALL)
    try:
        yield
    finally:
        byte_cache.configure(before)


def _play(levels: tuple[str, ...], options: Options, seed: str, decisions: int) -> None:
    """Play that many decisions of a game (or to its end), checking every memo
    after each."""
    state, events = State.start(Game(len(levels), options), seed)
    public = [e.to_dict() for e in events if e.is_public]
    shuffler = Shuffler.from_hex(seed)
    for _ in range(decisions):
        if state.round is None:
            assert state.winners
            return
        seat = state.round.turn
        view = observe(state, seat)
        move = bots.decide(levels[seat], view, turn_rng(shuffler, state), public)
        assert move.to_dict() in view["legal_moves"]
        for name, used, bound, _entries in byte_cache.report():
            assert used <= bound, (name, used, bound)
        public.extend(e.to_dict() for e in state.apply(seat, move) if e.is_public)


@pytest.mark.usefixtures("small_budget")
def test_bots_fill_every_memo_past_its_bound_and_stay_within_it() -> None:
    memos = [evaluator.SEARCHES, evaluator.HANDS, solver.ARRANGEMENTS, plan.MELDS]
    offered = {m.name: m.puts for m in memos}
    dropped = {m.name: m.dropped for m in memos}
    # classic rules (the evaluator's own search) and one wild a meld (the
    # solver's exact arrangements): strong bots at 4 seats ask the most
    for i, options in enumerate([Options(), preset("finnish")]):
        _play(("strong", "basic", "strong", "random"), options, game_seed("bound", i), 400)
    for memo in memos:
        # filled past the bound: entries were dropped to stay within it
        assert memo.puts > offered[memo.name], memo.name
        assert memo.dropped > dropped[memo.name], memo.name
        assert 0 <= memo.used <= memo.bound
    used, bound = byte_cache.totals()
    assert used <= bound <= SMALL


def _bytes_freed_by(clear: object) -> int:
    assert callable(clear)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    clear()
    gc.collect()
    return held - tracemalloc.get_traced_memory()[0]


def test_the_memos_count_at_least_what_their_entries_take() -> None:
    before = byte_cache.budget()
    byte_cache.configure(256 << 20)  # room for every entry (and every memo emptied)
    memos = [evaluator.SEARCHES, evaluator.HANDS, solver.ARRANGEMENTS, plan.MELDS]
    dropped = [m.dropped for m in memos]
    tracemalloc.start()
    try:
        _play(("strong", "basic"), Options(), game_seed("weigh", 0), 40)
        _play(("strong", "basic"), preset("finnish"), game_seed("weigh", 1), 40)
        for memo, was in zip(memos, dropped, strict=True):
            assert memo.dropped == was and len(memo) > 100, memo.name
            counted = memo.used
            freed = _bytes_freed_by(memo.clear)
            assert 0 < freed <= counted, (memo.name, freed, counted)
    finally:
        tracemalloc.stop()
        byte_cache.configure(before)
