"""The driver loop of the generic column-generation engine.

Per round: solve the restricted master LP, read its duals, try the pricing levels
cheapest first (:mod:`groupcf.colgen.levels`), add the improving columns to the master
(every column priced goes to the pool, and so do the priced columns a level marks as not
improving), repeat. A level's dual bound gives the master's
valid bound on the full LP at every round (Farley's bound for set cover, the Lagrangian
bound ``z + k·max(0, β − μ)`` for max coverage: :mod:`groupcf.colgen.masters`); when an
exact level proves that nothing improves, the LP value itself is the bound. The loop ends
then, as soon as the LP value meets a bound already proven (the master's trivial bound,
e.g. every active element covered in a max-coverage master: nothing is left to price), at
``max_iterations`` or at the deadline (anytime: the bound so far is returned).
The integer master over the pool (:func:`~groupcf.colgen.masters.solve_integer_master`)
is the caller's next step.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from ..progress import Phase
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
    iterations: int                # restricted-master LPs solved
    duals: Duals | None = None
    levels: dict = field(default_factory=dict)
    x: np.ndarray | None = None    # λ per master column at the last LP
    lp_solves: int = 0             # LP solves attempted (``iterations`` + a failed one)
    time_master: float = 0.0       # seconds in the master LPs
    stopped: str = ""              # why the loop ended: converged, deadline, lp, level,
    #                                no_improvement, max_iterations, callback or bound


def column_generation(master: _Master, pool: ColumnPool, levels: list[PricingLevel], *,
                      deadline: Deadline | None = None, max_iterations: int = 100000,
                      data=None, on_round=None, dual_bound=None, on_entered=None, stop_when=None,
                      phase: str | None = None, progress: bool = False, incumbent=None) -> CGRun:
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
    max_iterations
        Most restricted-master LPs.
    data
        Passed to the levels as ``ctx.data``.
    on_round
        Called as ``on_round(iteration, lp_value, bound)`` after each LP (progress).
    dual_bound
        ``dual_bound(duals) -> beta``: a proven ``β ≥ max_a π(C_a)/w_a`` read from the
        duals alone (cheap, e.g. every column lies inside one element's compatible set),
        applied to the bound each round before pricing.
    on_entered
        Called as ``on_entered(iteration, priced, bound)`` after a level's columns entered
        the master (``priced``: the level's :class:`~groupcf.colgen.levels.Priced`);
        returning ``True`` ends the loop (``stopped="callback"``), e.g. when the bound
        meets the caller's incumbent.
    stop_when
        Called as ``stop_when(bound)`` after a level's dual bound updated the bound;
        returning ``True`` ends the loop before that level's columns enter
        (``stopped="bound"``), e.g. a branch-and-price node whose bound reaches the
        incumbent is pruned.
    phase
        Report the run as a phase of this name (:class:`groupcf.progress.Phase`: a bar
        with the iteration, LP value, bound, incumbent and columns on a terminal when
        ``progress``, else one INFO line when the loop ends); ``None`` (default): silent,
        e.g. inside a branch-and-price node.
    progress
        The caller's ``progress=`` argument (the bar; only with ``phase``).
    incumbent
        ``incumbent() -> value``: the caller's best integer solution so far (or ``None``),
        reported with the bound.

    Returns
    -------
    CGRun
    """
    if phase is None:
        return _loop(master, pool, levels, deadline, max_iterations, data, on_round, dual_bound, on_entered,
                     stop_when)
    def best() -> float | None:
        value = None if incumbent is None else incumbent()
        return None if value is None or not np.isfinite(value) else value

    with Phase(phase, progress, logger=log, unit="iterations") as report:
        def reporting(it: int, z: float, bound: float) -> None:
            report.update(lp=z, bound=bound, incumbent=best(), columns=master.n_columns)
            if on_round is not None:
                on_round(it, z, bound)

        run = _loop(master, pool, levels, deadline, max_iterations, data, reporting, dual_bound, on_entered,
                    stop_when)
        report.set(lp=run.lp_value, bound=run.bound, incumbent=best(), columns=master.n_columns,
                   stopped=run.stopped)
    return run


def _loop(master: _Master, pool: ColumnPool, levels: list[PricingLevel], deadline: Deadline | None,
          max_iterations: int, data, on_round, dual_bound, on_entered, stop_when) -> CGRun:
    """The loop of :func:`column_generation`, unreported."""
    deadline = deadline or Deadline(None)
    ctx = PricingContext(pool, deadline, data)
    bound = master.trivial_bound()
    status, converged, it, lp = Status.FEASIBLE, False, 0, None
    solves, time_master, stopped = 0, 0.0, "max_iterations"
    while it < max_iterations:
        if deadline.passed:
            status, stopped = Status.TIME_LIMIT, "deadline"
            break
        solves += 1
        t = time.perf_counter()
        lp = master.solve_lp(deadline.left())
        time_master += time.perf_counter() - t
        if lp.status != Status.OPTIMAL:
            status, stopped = (Status.TIME_LIMIT if deadline.passed else lp.status), "lp"
            break
        assert lp.value is not None and lp.duals is not None   # an optimal LP has both
        it += 1
        if dual_bound is not None:
            bound = master.better(bound, master.bound(lp.value, lp.duals, dual_bound(lp.duals)))
        if on_round is not None:
            on_round(it, lp.value, bound)
        if master.meets(lp.value, bound):      # the LP attains a proven bound: nothing can improve it
            converged, status, stopped, bound = True, Status.OPTIMAL, "converged", lp.value
            break
        entered, done = 0, False
        for level in levels:
            res = level(lp.duals, ctx)
            if res is None:
                continue
            if res.stop is not None:
                status, done, stopped = res.stop, True, "level"
                break
            if res.dual_bound is not None:
                bound = master.better(bound, master.bound(lp.value, lp.duals, res.dual_bound))
                if stop_when is not None and stop_when(bound):
                    done, stopped = True, "bound"
                    break
            for col in res.pool:
                pool.add(col)
            for col in res.columns:
                pos = pool.add(col)
                if pos is None:
                    pos = pool.index[col.key]
                if not pool.in_master[pos] and lp.duals.reduced(pool.columns[pos]) > EPS:
                    master.add(pool.columns[pos])
                    pool.in_master[pos] = True
                    entered += 1
            if entered:
                if on_entered is not None and on_entered(it, res, bound):
                    done, stopped = True, "callback"
                break
            if res.proof:
                converged, status, done, stopped = True, Status.OPTIMAL, True, "converged"
                bound = master.better(bound, lp.value)
                break
        else:
            done, stopped = True, "no_improvement"   # no level improved nor proved: not converged
        if done:
            break
    return CGRun(status, None if lp is None else lp.value, bound, converged, it,
                 None if lp is None else lp.duals,
                 {lv.name: dict(calls=lv.stats.calls, hits=lv.stats.hits, columns=lv.stats.columns,
                                time=round(lv.stats.time, 4)) for lv in levels},
                 None if lp is None else lp.x, solves, time_master, stopped)


def sync_master(master: _Master, pool: ColumnPool) -> None:
    """Add every pool column to a fresh ``master`` (the pool's ``in_master`` flags then
    refer to it)."""
    for j, col in enumerate(pool.columns):
        master.add(col)
        pool.in_master[j] = True
