"""The byte-bounded memos (service/engine/byte_cache.py) on entries made up for
them: the bound holds, the least recently used go first, and the budget is
shared out by share."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from service.engine import byte_cache
from service.engine.byte_cache import ClearingMemo, LRUMemo, footprint


@pytest.fixture
def names() -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    for name in made:
        byte_cache.unregister(name)


def test_lru_memo_keeps_within_its_bound(names: list[str]) -> None:
    memo = LRUMemo("test.lru", 0.0, bound=10_000)
    names.append(memo.name)
    for n in range(500):
        memo.put(n, tuple(range(n % 40)))
        assert memo.used <= memo.bound
    assert memo.dropped > 0 and len(memo) < 500
    assert memo.used > memo.bound // 2  # filled, not emptied
    assert memo.get(499) == tuple(range(499 % 40))  # the newest are kept
    assert memo.get(0) is None  # the oldest went


def test_lru_memo_drops_the_least_recently_used(names: list[str]) -> None:
    entry = byte_cache.LRU_SLOT + footprint((10**9,))  # every entry weighs this
    memo = LRUMemo("test.order", 0.0, bound=5 * entry)
    names.append(memo.name)
    for n in range(5):
        memo.put(n, (10**9 + n,))
    assert len(memo) == 5 and memo.used == 5 * entry
    assert memo.get(0) == (10**9,)  # read: now the most recently used
    memo.put(5, (10**9 + 5,))
    assert memo.get(1) is None  # the least recently used went
    assert memo.get(0) == (10**9,) and memo.get(5) == (10**9 + 5,)
    assert memo.used == 5 * entry and memo.dropped == 1


def test_lru_memo_weighs_what_it_keeps(names: list[str]) -> None:
    memo = LRUMemo("test.weigh", 0.0, bound=1 << 20)
    names.append(memo.name)
    value = tuple(10**9 + i for i in range(100))  # 100 big ints, not the shared small ones
    memo.put("k", value)
    assert memo.used == byte_cache.LRU_SLOT + footprint(value)  # a str key: shared
    assert footprint(value) == sys.getsizeof(value) + sum(sys.getsizeof(v) for v in value)


def test_an_entry_heavier_than_the_bound_is_not_kept(names: list[str]) -> None:
    memo = LRUMemo("test.heavy", 0.0, bound=500)
    names.append(memo.name)
    memo.put("big", tuple(range(1000)))
    assert memo.get("big") is None and memo.used == 0 and memo.dropped == 1
    clearing = ClearingMemo("test.heavy2", 0.0, bound=500)
    names.append(clearing.name)
    clearing.add("big", 1, 501)
    assert len(clearing) == 0 and clearing.used == 0


def test_memoize_answers_as_the_function_does(names: list[str]) -> None:
    memo = LRUMemo("test.memoize", 0.0, bound=4_000)
    names.append(memo.name)
    calls: list[int] = []

    @memo.memoize
    def squares(n: int) -> tuple[int, ...]:
        calls.append(n)
        return tuple(i * i for i in range(n))

    for n in [n for n in range(60) for _ in range(3)] + list(range(60)):
        assert squares(n) == tuple(i * i for i in range(n))
        assert memo.used <= memo.bound
    assert memo.hits + memo.misses == 240 and len(calls) == memo.misses
    assert memo.hits >= 120  # each n asked thrice in a row: found the second and third time
    assert memo.misses > 60  # the big ones were dropped: asked again, computed again


def test_clearing_memo_empties_itself_at_its_bound(names: list[str]) -> None:
    memo = ClearingMemo("test.clearing", 0.0, bound=1_000)
    names.append(memo.name)
    for n in range(100):
        memo.add(n, n, 64)
        assert memo.used <= memo.bound and memo.used == 64 * len(memo)
    assert memo.clears == (100 - 1) // 15  # 15 entries of 64 bytes fit in 1,000
    assert memo.data.get(99) == 99


def test_configure_shares_the_budget_out(names: list[str]) -> None:
    before = byte_cache.budget()
    a = LRUMemo("test.share.a", 0.25)
    b = ClearingMemo("test.share.b", 0.5)
    names.extend([a.name, b.name])
    try:
        byte_cache.configure(8 << 20)
        assert a.bound == 2 << 20 and b.bound == 4 << 20
        assert ("test.share.b", 0, 4 << 20, 0) in byte_cache.report()
        rows = byte_cache.report()
        assert byte_cache.totals() == (sum(r[1] for r in rows), sum(r[2] for r in rows))
    finally:
        byte_cache.configure(before)
