"""The compact MIP baseline (``method="compact"``), warm-started from the initial columns."""
from __future__ import annotations

import logging
import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..options import Options
from ..progress import Phase
from ..solvers.base import INF, Status
from ..utils import EPS, Deadline
from .common import GroupSolution, Stats, initial_columns
from .formulations.compact import CompactMIP
from .formulations.master import solve_set_cover
from .problem import GroupProblem

log = logging.getLogger(__name__)

#: re-solves with a 10x larger score margin when the real model rejects a MIP point
MAX_MARGIN_RETRIES = 3


@dataclass(frozen=True)
class CompactOptions(Options):
    """Options of ``gcf.explain_group(..., method="compact")``.

    None yet: the compact MIP is sized by the initial cover. The class exists so that every
    method has one options object (``options=``) and an unknown option is named.

    Raises
    ------
    InvalidInputError
        From :meth:`~groupcf.options.Options.from_kwargs`, for any option given.

    Examples
    --------
    >>> gcf.CompactOptions().to_dict()
    {}
    """


def compact_mip(problem: GroupProblem, solver="highs", time_limit: float | None = None,
                progress: bool = True, options: CompactOptions | None = None) -> GroupSolution:
    """``K`` = size of the best cover by the initial columns (a valid upper bound); the MIP
    is warm-started with that cover. The lower bound is the MIP's dual bound (rounded up)."""
    deadline = Deadline(time_limit)
    stats = Stats()
    t = time.perf_counter()
    with Phase("initial columns", progress, problem.n_types, log, unit="types") as bar:
        init, no_cf = initial_columns(problem, solver, deadline, bar)
        bar.set(columns=len(init), without_counterfactual=int(no_cf.sum()))
    if no_cf.all():   # nothing to explain; explain_group names the rows
        return GroupSolution([], 0, Status.OPTIMAL, stats, no_cf)
    active = ~no_cf
    C = np.array([c.cover & active for c in init])
    start = solve_set_cover(C[:, active], solver, time_limit=deadline.left())
    chosen = [init[j] for j in np.flatnonzero(start.values[: len(init)] > 0.5)]
    stats.time_initial = time.perf_counter() - t
    K = len(chosen)
    if K <= 1:   # one counterfactual explains everything: nothing can be better
        return GroupSolution(chosen, K, Status.OPTIMAL, stats, no_cf)
    t = time.perf_counter()
    with Phase("compact MIP", progress, logger=log) as ph:
        mip = CompactMIP(problem, K, solver, active=active, time_limit=deadline.left(),
                         completions=problem.completions(solver))
        mip.warm_start(chosen)
        sol = mip.solve()
        stats.time_final_ip = time.perf_counter() - t
        stats.extra.update(K=K, compact_vars=mip.backend.num_vars, compact_rows=mip.backend.num_rows)
        if not sol.status.has_solution:
            ph.set(explanations=K, bound=1, status=sol.status.value)
            return GroupSolution(chosen, 1, Status.TIME_LIMIT, stats, no_cf)
        cols = mip.columns(sol)
        if len(cols) > K:
            cols = chosen
        cols = _accepted_columns(problem, mip, cols, chosen, deadline, stats)
        bound = sol.dual_bound if sol.dual_bound is not None else (
            sol.objective if sol.status == Status.OPTIMAL and sol.objective is not None else 1)
        lower = max(1, math.ceil(bound - EPS))
        ph.set(explanations=len(cols), bound=lower)
    status = Status.OPTIMAL if sol.status == Status.OPTIMAL else sol.status
    return GroupSolution(cols, lower, status, stats, no_cf)


def _real_positive(problem: GroupProblem, cols) -> bool:
    if not cols:
        return True
    V = np.array([c.v for c in cols])
    return bool(problem.tm.is_positive(problem.space.inverse_transform(V)).all())


def _accepted_columns(problem: GroupProblem, mip: CompactMIP, cols, chosen, deadline, stats):
    """Every counterfactual must be accepted by the real model. A MIP point on the decision
    boundary (within the solver's feasibility tolerance of the margin, e.g. a score of
    exactly 0 for a margin classifier with integer weights) triggers a re-solve with a
    10x larger margin (at most :data:`MAX_MARGIN_RETRIES` times); the lower bound of the
    first solve stays (it is valid for the requested margin). Failing that, the initial
    cover is returned with a warning."""
    margin = max(problem.margin, EPS)
    for _ in range(MAX_MARGIN_RETRIES):
        if _real_positive(problem, cols) or deadline.passed:
            break
        margin *= 10
        stats.extra["margin_retries"] = stats.extra.get("margin_retries", 0) + 1
        log.info("the real model rejects a compact-MIP point; re-solving with score margin %g", margin)
        lo = problem.tm.logit_threshold + margin
        for blk in mip.blocks:
            mip.backend.set_row_bounds([blk.constr.lo_row], [lo], [INF])
        mip.backend.options.time_limit = deadline.left()
        mip.warm_start(chosen)
        sol = mip.solve()
        if sol.status.has_solution:
            new = mip.columns(sol)
            cols = new if len(new) <= len(chosen) else chosen
    if not _real_positive(problem, cols):
        warnings.warn("the real model rejects a counterfactual of the compact MIP even with a larger "
                      "margin; returning the initial cover instead", stacklevel=3)
        cols = chosen
    return cols
