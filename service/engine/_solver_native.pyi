# Stub of the C extension built from _solver_native.c (see _solver_core.py).
from collections.abc import Sequence

Step = tuple[tuple[int, ...], int, str]

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
    leaf: tuple[int, int, int, int],
    high: bool,
) -> tuple[int, list[Step], int, int]: ...
