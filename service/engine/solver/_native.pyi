# Stub of the C extension built from _native.c (see search.py).
from collections.abc import Sequence

from service.engine.solver.python_search import LeafCosts, Step

MAX_CARDS: int

def solve_free(
    ids: Sequence[int],
    wilds: int,
    pts: Sequence[int],
    cheap: Sequence[int],
    allwild_ok: bool,
    high: bool,
) -> tuple[int, list[Step], int, int]: ...
def solve_one(
    ids: Sequence[int],
    jokers: int,
    wr_base: int,
    pts: Sequence[int],
    leaf: LeafCosts,
    high: bool,
) -> tuple[int, list[Step], int, int]: ...
def solve_free_each(
    ids: Sequence[int],
    wilds: int,
    pts: Sequence[int],
    cheap: Sequence[int],
    allwild_ok: bool,
    high: bool,
    drops: Sequence[int],
) -> list[tuple[int, list[Step], int, int]]: ...
def solve_one_each(
    ids: Sequence[int],
    jokers: int,
    wr_base: int,
    pts: Sequence[int],
    leaf: LeafCosts,
    high: bool,
    drops: Sequence[int],
) -> list[tuple[int, list[Step], int, int]]: ...
