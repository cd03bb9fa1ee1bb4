"""Byte-bounded memos: everything the bots and the solver remember as they play,
under one budget of bytes per process.

Two kinds, each registered under a name with its share of the budget
(:func:`configure` sets the budget: ``BOT_CACHE_MB``, ``service/config.py``):

- :class:`LRUMemo`: a least-recently-used memo of a pure function, whose
  entries are weighed one by one as they come in (:func:`footprint`) and the
  oldest dropped while they weigh more than the bound (``cachetools.LRUCache``
  with ``getsizeof``).  For memos read a few times per decision: the solver's
  arrangements, its melds.
- :class:`ClearingMemo`: a plain ``dict`` for the innermost recursion of the
  bots' evaluator, read millions of times a minute, where the LRU's own
  bookkeeping on every read would cost more than it saves.  The caller weighs
  each entry it adds (:meth:`ClearingMemo.add`, by the arithmetic of its key's
  tuples) and the whole memo is emptied when it passes its bound: it fills
  again within a decision or two.

:func:`report` gives every memo's bytes against its bound (the benchmark
``bench/bot_memory.py`` prints it).

>>> m = LRUMemo("doctest", 0.0, bound=1000)
>>> @m.memoize
... def square(n: int) -> int:
...     return n * n
>>> square(12), square(12), m.hits, m.misses
(144, 144, 1, 1)
>>> [square(n) for n in range(100)][-1], m.used <= m.bound
(9801, True)
>>> unregister("doctest")
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import threading
from collections.abc import Callable, Hashable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from cachetools import LRUCache

from service.engine.cards import Card

DEFAULT_BYTES = 64 << 20
"""The budget until :func:`configure` sets one (``BOT_CACHE_MB``'s default)."""

P = ParamSpec("P")
R = TypeVar("R")


class _Bounded:
    """What every memo of the budget has: a name, a share, a bound, bytes held."""

    def __init__(self, name: str, share: float, bound: int | None) -> None:
        self.name = name
        self.share = share
        self.bound = int(_budget * share) if bound is None else bound
        self.hits = 0
        self.misses = 0
        self.puts = 0  # entries offered, kept or not
        self.dropped = 0  # entries dropped to stay within the bound, or never kept
        _REGISTRY[name] = self

    @property
    def used(self) -> int:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def clear(self) -> None:
        raise NotImplementedError

    def resize(self, bound: int) -> None:
        """A new bound (the memo is emptied)."""
        self.bound = bound
        self.clear()


class LRUMemo(_Bounded):
    """A least-recently-used memo holding at most ``bound`` bytes of entries,
    each weighed by ``sizeof`` (key and value together) as it comes in."""

    def __init__(
        self,
        name: str,
        share: float,
        *,
        sizeof: Callable[[Hashable, Any], int] | None = None,
        bound: int | None = None,
    ) -> None:
        super().__init__(name, share, bound)
        self._sizeof = sizeof or _entry_footprint
        self._lock = threading.Lock()
        self._lru: LRUCache[Hashable, tuple[int, Any]] = self._new()

    def _new(self) -> LRUCache[Hashable, tuple[int, Any]]:
        # each value is stored with its entry's weight: getsizeof sees only the value
        return LRUCache(max(1, self.bound), getsizeof=_weight)

    @property
    def used(self) -> int:
        return int(self._lru.currsize)

    def __len__(self) -> int:
        return len(self._lru)

    def clear(self) -> None:
        with self._lock:
            self._lru = self._new()

    def get(self, key: Hashable) -> Any | None:
        """The value memoized for ``key`` (marked as just used), or None."""
        with self._lock:
            found = self._lru.get(key)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        return found[1]

    def put(self, key: Hashable, value: Any) -> None:
        """Remember ``value`` for ``key``, dropping the least recently used
        entries while the memo weighs more than its bound (an entry heavier
        than the whole bound is not kept)."""
        size = self._sizeof(key, value)
        self.puts += 1
        if size > self.bound:
            self.dropped += 1
            return
        with self._lock:
            before = len(self._lru) + (key not in self._lru)
            self._lru[key] = (size, value)
            self.dropped += before - len(self._lru)

    def memoize(self, fn: Callable[P, R]) -> Callable[P, R]:
        """``fn`` (pure, positional hashable arguments) memoized here."""
        missing = object()

        @wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            key = args if not kwargs else (args, tuple(sorted(kwargs.items())))
            with self._lock:
                found = self._lru.get(key, missing)
            if found is not missing:
                self.hits += 1
                return found[1]  # type: ignore[index, no-any-return]
            self.misses += 1
            value = fn(*args, **kwargs)
            self.put(key, value)
            return value

        return wrapper


def _weight(entry: tuple[int, Any]) -> int:
    return entry[0]


class ClearingMemo(_Bounded):
    """A ``dict`` (:attr:`data`, read directly by its owner) emptied whenever the
    bytes its owner reports with :meth:`add` pass the bound."""

    def __init__(self, name: str, share: float, *, bound: int | None = None) -> None:
        super().__init__(name, share, bound)
        self.data: dict[Hashable, Any] = {}
        self._used = 0
        self.clears = 0

    @property
    def used(self) -> int:
        return self._used

    def __len__(self) -> int:
        return len(self.data)

    def clear(self) -> None:
        self.data.clear()
        self._used = 0

    def add(self, key: Hashable, value: Any, size: int) -> None:
        """Remember ``value`` for ``key``, an entry of ``size`` bytes (key,
        value and the dict's slot), emptying the memo first if it would pass
        its bound."""
        self.puts += 1
        if self._used + size > self.bound:
            self.dropped += len(self.data)
            self.clear()
            self.clears += 1
            if size > self.bound:
                self.dropped += 1
                return
        self.data[key] = value
        self._used += size


# -- weighing entries ----------------------------------------------------------

DICT_SLOT = 56
"""Bytes a dict spends per entry, amortized: a 24-byte entry and its index,
with the table between a third and two thirds full."""
LRU_SLOT = 280
"""Bytes ``cachetools.LRUCache`` spends per entry besides its key and value:
its dict's slot, the slots of its dicts of sizes and of order (with the
order's link), and the (weight, value) pair stored here (266 measured with
tracemalloc, on CPython 3.11)."""
_SHARED = (type(None), bool, str, enum.Enum, float)
"""Values a memo never owns alone: singletons, enum members, and strings
(card codes and names, interned)."""


def footprint(obj: object, *, _depth: int = 0) -> int:
    """Bytes that ``obj`` holds, counted down through tuples, lists, dicts,
    sets and slotted dataclasses; objects shared with the rest of the process
    count nothing: ints below 257, None, booleans, strings, enum members, and
    the interned cards (``Card``, one object per card id).

    >>> footprint(5), footprint(10**9) > 0, footprint(()) == sys.getsizeof(())
    (0, True, True)
    >>> footprint((10**9, 10**9 + 1)) == sys.getsizeof((0, 0)) + 2 * sys.getsizeof(10**9)
    True
    """
    if isinstance(obj, _SHARED) or _depth > 20:
        return 0
    if isinstance(obj, int):
        return 0 if -5 <= obj <= 256 else sys.getsizeof(obj)
    if isinstance(obj, Card):
        return 0
    size = sys.getsizeof(obj)
    depth = _depth + 1
    if isinstance(obj, tuple | list | set | frozenset):
        return size + sum(footprint(item, _depth=depth) for item in obj)
    if isinstance(obj, dict):
        return size + sum(
            footprint(k, _depth=depth) + footprint(v, _depth=depth) for k, v in obj.items()
        )
    if dataclasses.is_dataclass(obj):
        return size + sum(
            footprint(getattr(obj, f.name), _depth=depth) for f in dataclasses.fields(obj)
        )
    return size


def _entry_footprint(key: Hashable, value: Any) -> int:
    return LRU_SLOT + footprint(key) + footprint(value)


def tuple_bytes(n: int) -> int:
    """What ``sys.getsizeof`` says of a tuple of ``n`` items (the empty tuple
    itself is shared: count it only for ``n`` > 0), without building one.

    >>> tuple_bytes(3) == sys.getsizeof((1, 2, 3))
    True
    """
    return _TUPLE_BASE + 8 * n


_TUPLE_BASE = sys.getsizeof(())


# -- the budget ------------------------------------------------------------------

_budget = DEFAULT_BYTES
_REGISTRY: dict[str, _Bounded] = {}


def configure(total_bytes: int) -> None:
    """Give every memo its share of ``total_bytes`` (each is emptied)."""
    global _budget
    _budget = total_bytes
    for memo in _REGISTRY.values():
        memo.resize(int(total_bytes * memo.share))


def budget() -> int:
    """The bytes all the memos may hold together."""
    return _budget


def report() -> list[tuple[str, int, int, int]]:
    """``(name, bytes held, bound, entries)`` of every memo."""
    return [(m.name, m.used, m.bound, len(m)) for m in _REGISTRY.values()]


def totals() -> tuple[int, int]:
    """Bytes held by every memo together, and their bounds together."""
    rows = report()
    return sum(r[1] for r in rows), sum(r[2] for r in rows)


def unregister(name: str) -> None:
    """Forget a memo (one made for a test)."""
    _REGISTRY.pop(name, None)
