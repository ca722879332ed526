"""What every group algorithm shares: statistics, the solution type, initial columns,
the integer master and the greedy cover.

Tolerances (:data:`~groupcf.utils.EPS`) and the time budget
(:class:`~groupcf.utils.Deadline`) come from :mod:`groupcf.utils`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..exceptions import SolverError
from ..formulations.completion import Completions
from ..formulations.nearest import NearestCounterfactual
from ..solvers import make_backend
from ..solvers.base import Status
from ..utils import Deadline
from .formulations.exact_check import check_union
from .formulations.master import solve_set_cover
from .formulations.pricing import BestChangeSet
from .problem import Column, GroupProblem

__all__ = ["Deadline", "GroupSolution", "Stats", "greedy_cover", "initial_columns", "integer_master"]


@dataclass
class Stats:
    """Counters and times of one run (``as_dict`` flattens ``extra`` into it)."""

    iterations: int = 0
    columns: int = 0
    pricing_calls: int = 0
    heuristic_hits: int = 0
    pool_hits: int = 0
    aux_calls: int = 0
    time_initial: float = 0.0
    time_master: float = 0.0
    time_pricing: float = 0.0
    time_heuristic: float = 0.0
    time_auxiliary: float = 0.0
    time_final_ip: float = 0.0
    lp_bound: float = 0.0
    converged: bool = False
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k != "extra"}
        d.update(self.extra)
        return d


@dataclass
class GroupSolution:
    """What an algorithm returns to :func:`groupcf.explain_group`."""

    columns: list[Column]          # chosen columns
    lower_bound: int
    status: Status
    stats: Stats
    unexplained_types: np.ndarray  # bool over types


def initial_columns(problem: GroupProblem, solver, deadline: Deadline, progress=None,
                    completions: Completions | None = None, prove: bool = True
                    ) -> tuple[list[Column], np.ndarray]:
    """One counterfactual (≤ Tmax changes) per type not yet covered, its change set
    extended (auxiliary MIP 1) to cover as many further uncovered types as possible
    while still covering its own; identical columns merged. Returns the columns and the
    bool mask of types that have no counterfactual within ``Tmax``.

    The counterfactual comes from ``completions`` (:meth:`Completions.check`: greedy
    search, then a feasibility MIP) when given, else from the nearest-counterfactual MIP
    (l0; only a feasible point of that MIP when ``completions`` is given). With
    ``prove=False`` (increase-only features, which the completion service
    never changes unless asked) its greedy points are valid counterfactuals and, where it
    fails, every maximal change set is checked without a MIP when possible
    (:func:`~groupcf.group.formulations.exact_check.check_union`: closed form or
    enumeration, a proof either way); otherwise the MIP decides.

    When ``deadline`` passes, the remaining types get only the greedy completion (numpy,
    no MIP, no extension); a type still without one is marked in ``problem.unreached``
    (and in the returned mask, so no algorithm tries to cover it) instead of failing the
    whole call: the answer then explains everyone else, and ``explain_group`` lists the
    unreached rows with the time limit as the reason."""
    space, emb = problem.space, problem.embedding
    best_F = BestChangeSet(problem, solver)
    mutable = np.array([not f.immutable for f in space])
    inc = np.array([f.increase_only and not f.immutable for f in space])
    cols: dict[bytes, Column] = {}
    no_cf = np.zeros(problem.n_types, dtype=bool)
    covered = np.zeros(problem.n_types, dtype=bool)
    for i in range(problem.n_types):
        if progress is not None:
            progress.update(1)
        if covered[i]:
            continue  # an earlier column covers it already
        if deadline.passed:
            ok, v = (completions.check(problem.Z[i], (), problem.Tmax, prove=False)[:2]
                     if completions is not None else (None, None))
            if ok and v is not None:
                col = problem.make_column(v, np.flatnonzero(problem.differences(v)[i]), "initial")
                cols.setdefault(col.key, col)
                covered |= col.cover
            elif ok is False:         # the greedy search is exact here (additive model): a proof
                no_cf[i] = True
            else:
                problem.unreached[i] = no_cf[i] = True
            continue
        if completions is not None:
            ok, v, _ = completions.check(problem.Z[i], (), problem.Tmax, time_limit=deadline.left(),
                                         prove=prove)
            proof = prove
            if not ok and not prove:        # exact without a MIP when it can (closed form, enumeration)
                ok, v, _ = check_union(completions, problem, i, (), np.where(inc, problem.codes[i], 0.0), mutable)
                proof = ok is False
            if ok is False and proof:
                no_cf[i] = True
                continue
            if ok:
                covered |= _add_initial(problem, best_F, cols, covered, i, v)
                continue
        be = make_backend(solver, time_limit=deadline.left())
        mip = NearestCounterfactual(space, emb, problem.Z[i], be, score_lo=problem.score_lo, Tmax=problem.Tmax).build()
        if completions is not None:
            be.set_objective([], [])   # any accepted point will do (the nearest one costs ~10x more)
        sol = be.solve()
        if sol.status == Status.INFEASIBLE:
            no_cf[i] = True
            continue
        if not sol.status.has_solution:
            if deadline.passed or sol.status == Status.TIME_LIMIT:
                problem.unreached[i] = no_cf[i] = True
                continue
            raise SolverError(f"initial counterfactual MIP ended with status {sol.status.value}")
        covered |= _add_initial(problem, best_F, cols, covered, i, sol.values[mip.v])
    problem.unreached &= ~covered         # a later column covered it after all
    no_cf &= ~covered
    return list(cols.values()), no_cf


def _add_initial(problem, best_F, cols, covered, i, v) -> np.ndarray:
    weights = 1e-3 + (~covered)          # prefer types not yet covered ...
    weights[i] = problem.n_types + 1.0   # ... but always this one
    F, _ = best_F.best(v, weights)
    col = problem.make_column(v, F, "initial")
    if not col.cover[i]:   # the search for F stopped early (its MIP's time limit): i's own changes
        col = problem.make_column(v, np.flatnonzero(problem.differences(v)[i]), "initial")
    if not col.cover[i]:   # cannot happen: type i's own changes fit in Tmax
        raise SolverError(f"internal error: the initial column of type {i} does not cover it")
    cols.setdefault(col.key, col)
    return col.cover


def integer_master(covers: np.ndarray, cols: list[Column], solver, deadline: Deadline, stats: Stats,
                   active: np.ndarray, cap: float | None = None) -> tuple[int, list[Column]]:
    """The integer master over the columns (``covers``: one bool row per column; at most
    ``cap`` seconds: a heuristic during the loop); when the MIP has no solution, the greedy
    set cover (the columns always cover every active type)."""
    t = time.perf_counter()
    C = covers[:, active]
    left = deadline.left()
    limit = cap if left is None else (left if cap is None else min(cap, left))
    sol = solve_set_cover(C, solver, time_limit=limit)
    stats.time_final_ip += time.perf_counter() - t
    if sol.status.has_solution:
        chosen = [cols[j] for j in np.flatnonzero(sol.values[: len(cols)] > 0.5)]
    else:
        chosen = [cols[j] for j in greedy_cover(C)]
    return len(chosen), chosen


def greedy_cover(C: np.ndarray) -> list[int]:
    """Indices of columns (rows of ``C``) covering every type, greedily (largest new
    coverage first)."""
    left = C.any(axis=0).copy()
    out = []
    while left.any():
        j = int(np.argmax((C & left).sum(axis=1)))
        out.append(j)
        left &= ~C[j]
    return out
