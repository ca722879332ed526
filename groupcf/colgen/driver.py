"""The driver loop of the generic column-generation engine.

Per round: solve the restricted master LP, read its duals, try the pricing levels
cheapest first (:mod:`groupcf.colgen.levels`), add the improving columns to the master
(every column priced goes to the pool), repeat. A level's dual bound gives the master's
valid bound on the full LP at every round (Farley's bound for set cover, the Lagrangian
bound ``z + k·max(0, β − μ)`` for max coverage: :mod:`groupcf.colgen.masters`); when an
exact level proves that nothing improves, the LP value itself is the bound. The loop ends
then, at ``max_iterations`` or at the deadline (anytime: the bound so far is returned).
The integer master over the pool (:func:`~groupcf.colgen.masters.solve_integer_master`)
is the caller's next step.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ..solvers.base import Status
from ..utils import EPS, Deadline
from .levels import PricingContext, PricingLevel
from .masters import Duals, _Master
from .pool import ColumnPool

log = logging.getLogger(__name__)

__all__ = ["CGRun", "column_generation"]


@dataclass
class CGRun:
    """The outcome of one column-generation run."""

    status: Status                 # OPTIMAL: the LP over every column is solved (converged)
    lp_value: float | None         # last restricted-master LP value
    bound: float                   # valid bound on the full LP (lower for min, upper for max)
    converged: bool
    iterations: int
    duals: Duals | None = None
    levels: dict = field(default_factory=dict)


def column_generation(master: _Master, pool: ColumnPool, levels: list[PricingLevel], *,
                      deadline: Deadline | None = None, max_iterations: int = 100000,
                      data=None, on_round=None) -> CGRun:
    """Run the loop (module docstring) on ``master`` until pricing proves optimality.

    Parameters
    ----------
    master
        A :class:`~groupcf.colgen.masters.SetCoverMaster` or
        :class:`~groupcf.colgen.masters.MaxCoverageMaster`; every pool column already
        marked ``in_master`` must have been added to it.
    pool
        The column pool; new columns from the levels are added to it.
    levels
        Pricing levels, cheapest first; the last should be exact (it may prove that no
        column improves).
    deadline
        Time budget (:class:`~groupcf.utils.Deadline`).
    data
        Passed to the levels as ``ctx.data``.
    on_round
        Called as ``on_round(iteration, lp_value, bound)`` after each LP (progress).

    Returns
    -------
    CGRun
    """
    deadline = deadline or Deadline(None)
    ctx = PricingContext(pool, deadline, data)
    bound = master.trivial_bound()
    status, converged, it, lp = Status.FEASIBLE, False, 0, None
    while it < max_iterations:
        if deadline.passed:
            status = Status.TIME_LIMIT
            break
        lp = master.solve_lp(deadline.left())
        if lp.status != Status.OPTIMAL:
            status = Status.TIME_LIMIT if deadline.passed else lp.status
            break
        it += 1
        if on_round is not None:
            on_round(it, lp.value, bound)
        entered, done = 0, False
        for level in levels:
            res = level(lp.duals, ctx)
            if res is None:
                continue
            if res.stop is not None:
                status, done = res.stop, True
                break
            if res.dual_bound is not None:
                bound = master.better(bound, master.bound(lp.value, lp.duals, res.dual_bound))
            for col in res.columns:
                pos = pool.add(col)
                if pos is None:
                    pos = pool.index[col.key]
                if not pool.in_master[pos] and lp.duals.reduced(pool.columns[pos]) > EPS:
                    master.add(pool.columns[pos])
                    pool.in_master[pos] = True
                    entered += 1
            if entered:
                break
            if res.proof:
                converged, status, done = True, Status.OPTIMAL, True
                bound = master.better(bound, lp.value)
                break
        else:
            done = True          # no level improved nor proved: stop, not converged
        if done:
            break
    return CGRun(status, None if lp is None else lp.value, bound, converged, it,
                 None if lp is None else lp.duals,
                 {lv.name: dict(calls=lv.stats.calls, hits=lv.stats.hits, columns=lv.stats.columns,
                                time=round(lv.stats.time, 4)) for lv in levels})


def sync_master(master: _Master, pool: ColumnPool) -> None:
    """Add every pool column to a fresh ``master`` (the pool's ``in_master`` flags then
    refer to it)."""
    for j, col in enumerate(pool.columns):
        master.add(col)
        pool.in_master[j] = True
