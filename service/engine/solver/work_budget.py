"""The work budget of the lay-off search (:mod:`service.engine.solver.table`):
a search of a hand from outside a game stops past it."""

from __future__ import annotations

from service.engine.errors import SearchTooLargeError

WORK_BUDGET = 500_000
"""Work units one arrangement asked for by a client (``POST
/v1/hands/evaluate``) may take, about 0.1 s of one core here (a gevent worker
serves nothing else meanwhile, so this stays small; real hands take a few
hundred units, the costliest hand-made real-game tables some 10^6): a unit is a
lay-off tried with :func:`extend_meld`, a pair of multisets combined, or a
hundredth of a hand solved (:data:`SOLVE_UNITS`).  A game's own views and
lay-downs run without a budget (a game must always be able to score its
hands); ``bench/solver_bench.py`` measures the worst tables a game builds."""

SOLVE_UNITS = 100
"""Units charged for one solve of the rest of a hand."""


class Budget:
    """Work units left to one search; :meth:`spend` raises past zero.

    >>> budget = Budget(10)
    >>> budget.spend(4); budget.used
    4
    >>> budget.spend(7)
    Traceback (most recent call last):
    ...
    service.engine.errors.SearchTooLargeError: this hand and table take too long to evaluate
    """

    __slots__ = ("left", "limited", "used")

    def __init__(self, units: int | None = WORK_BUDGET) -> None:
        self.left = -1 if units is None else units  # None: count, never stop
        self.limited = units is not None
        self.used = 0

    def spend(self, units: int) -> None:
        self.used += units
        self.left -= units
        if self.left < 0 and self.limited:
            raise SearchTooLargeError("this hand and table take too long to evaluate")
