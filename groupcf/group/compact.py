"""The compact MIP baseline (``method="compact"``), warm-started from the initial columns."""
from __future__ import annotations

import logging
import math
import time

from dataclasses import dataclass

import numpy as np

from ..solvers.base import Status
from ..utils import EPS, Deadline
from .common import GroupSolution, Stats, initial_columns
from .formulations.compact import CompactMIP
from .formulations.master import solve_set_cover
from .problem import GroupProblem

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompactOptions:
    """Options of ``method="compact"`` (none yet: the MIP is sized by the initial cover)."""


def compact_mip(problem: GroupProblem, solver="highs", time_limit: float | None = None,
                progress: bool = True, options: CompactOptions | None = None) -> GroupSolution:
    """``K`` = size of the best cover by the initial columns (a valid upper bound); the MIP
    is warm-started with that cover. The lower bound is the MIP's dual bound (rounded up)."""
    from tqdm.auto import tqdm

    deadline = Deadline(time_limit)
    stats = Stats()
    t = time.perf_counter()
    with tqdm(total=problem.n_types, desc="initial columns", disable=not progress, leave=False) as bar:
        init, no_cf = initial_columns(problem, solver, deadline, bar)
    if no_cf.all():   # nothing to explain; explain_group names the rows
        return GroupSolution([], 0, Status.OPTIMAL, stats, no_cf)
    active = ~no_cf
    C = np.array([c.cover & active for c in init])
    start = solve_set_cover(C[:, active], solver, time_limit=deadline.left())
    chosen = [init[j] for j in np.flatnonzero(start.x[: len(init)] > 0.5)]
    stats.time_initial = time.perf_counter() - t
    K = len(chosen)
    if K <= 1:   # one counterfactual explains everything: nothing can be better
        return GroupSolution(chosen, K, Status.OPTIMAL, stats, no_cf)
    t = time.perf_counter()
    mip = CompactMIP(problem, K, solver, active=active, time_limit=deadline.left(),
                     completions=problem.completions(solver))
    mip.warm_start(chosen)
    sol = mip.solve()
    stats.time_final_ip = time.perf_counter() - t
    stats.extra.update(K=K, compact_vars=mip.backend.num_vars, compact_rows=mip.backend.num_rows)
    if not sol.status.has_solution:
        return GroupSolution(chosen, 1, Status.TIME_LIMIT, stats, no_cf)
    cols = mip.columns(sol)
    if len(cols) > K:
        cols = chosen
    bound = sol.dual_bound if sol.dual_bound is not None else (sol.objective if sol.status == Status.OPTIMAL else 1)
    lower = max(1, math.ceil(bound - EPS))
    status = Status.OPTIMAL if sol.status == Status.OPTIMAL else sol.status
    return GroupSolution(cols, lower, status, stats, no_cf)
