r"""Column generation over actions (:mod:`groupcf.colgen` instantiated for global actions).

1. **Seeds**: each type's *nearest action* (:meth:`ActionMIP.cheapest` for that type
   alone: the cheapest action covering it, or a proof that none does — then the type is
   not coverable), every sub-action of those, and combinations of the most frequent
   single changes; each evaluated over all types at once with the numpy model path.
2. **Fewest actions** (``k=None``): the set-cover master over the coverable types, priced
   by the pool then the exact pricing MIP (:class:`ExactLevel`), Farley's bound each
   round; the integer master over the pool, certified when it meets
   :math:`\lceil z_{LP} \rceil`.
3. **The curve** ``k' = 1, 2, …``: one max-coverage master whose budget grows, its columns
   kept; at each ``k'`` column generation to convergence (the Lagrangian bound
   :math:`z + k\max(0, \beta - \mu)` while it runs), then the integer master (coverage,
   then least total cost). At ``k' = 1`` the best single action is the pricing MIP with
   :math:`\pi = m` over every coverable type: exact. The upper bound on coverage at
   ``k'`` is :math:`\lfloor \min(\text{LP bound}, \text{coverable}) \rfloor`; a point is
   certified when the coverage found meets it.
"""
from __future__ import annotations

import itertools
import logging
import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..colgen import (ColumnPool, MaxCoverageMaster, PoolLevel, Priced, PricingLevel, SetCoverMaster,
                      column_generation, solve_integer_master, sync_master)
from ..progress import progress_bar
from ..solvers.base import Status
from ..utils import EPS, Deadline
from .actions import Action, ActionSpace
from .pricing import ActionMIP

log = logging.getLogger(__name__)


class ExactLevel(PricingLevel):
    """The pricing MIP over the types with a positive dual (exact; its dual bound is β)."""

    name = "pricing-mip"
    exact = True

    def __init__(self, mip: ActionMIP, n_solutions: int = 5):
        super().__init__()
        self.mip, self.n_solutions = mip, n_solutions

    def price(self, duals, ctx):
        res = self.mip.best(duals.pi, time_limit=ctx.deadline.left(), n_solutions=self.n_solutions)
        if not res.status.has_solution:
            return Priced(stop=Status.TIME_LIMIT if ctx.deadline.passed else res.status)
        cols = [self.mip.a.column(act, "pricing") for act in res.actions]
        proof = res.optimal and res.bound is not None and res.bound <= duals.price + EPS
        return Priced(cols, dual_bound=res.bound, proof=proof)


@dataclass
class CurvePoint:
    k: int
    chosen: list          # pool positions
    assign: np.ndarray    # per type: pool position or -1
    covered: float        # people covered
    cost: float           # their total cost
    upper: float          # certified upper bound on people covered with k actions
    status: Status


@dataclass
class SearchResult:
    pool: ColumnPool
    coverable: np.ndarray
    curve: list = field(default_factory=list)
    min_k: int | None = None           # fewest actions covering every coverable type (found)
    min_k_bound: int | None = None     # its certified lower bound
    stats: dict = field(default_factory=dict)


def seed_pool(aspace: ActionSpace, mip: ActionMIP, pool: ColumnPool, deadline: Deadline,
              max_frequent: int = 12, max_seed_mips: int = 300, progress: bool = False) -> np.ndarray:
    """Seed ``pool`` (module docstring, step 1); returns the coverable mask over types.
    Types are taken by decreasing multiplicity; after ``max_seed_mips`` nearest-action
    MIPs, only types no seed covers yet get one (each type's coverability is still
    decided: covered by a seed, or its own MIP)."""
    n = aspace.n_types
    coverable = np.zeros(n, dtype=bool)
    covered = np.zeros(n, dtype=bool)
    seeds = []
    order = np.argsort(-aspace.m, kind="stable")
    for r, t in enumerate(progress_bar(order, enabled=progress, total=n, desc="nearest actions")):
        if deadline.passed:
            break
        if r >= max_seed_mips and covered[t]:
            continue
        if not mip.can_cover(t):
            continue
        res = mip.cheapest([t], time_limit=deadline.left())
        if res.status.has_solution:
            act = res.actions[0]
            seeds.append(act)
            col = aspace.column(act, "nearest")
            pool.add(col)
            coverable[t] = True
            covered |= col.cover
        elif res.status != Status.INFEASIBLE and covered[t]:
            coverable[t] = True
    coverable |= covered
    cands = set()
    for act in seeds:
        for r in range(1, len(act)):
            for sub in itertools.combinations(act.features, r):
                cands.add(act.restrict(sub).key)
    freq = Counter(ch for act in seeds for ch in act.key)
    top = [ch for ch, _ in freq.most_common(max_frequent)]
    T = aspace.Tmax or len(aspace.mutable)
    for r in range(1, min(T, 3) + 1):
        for combo in itertools.combinations(top, r):
            if len({l for l, _ in combo}) == r:
                cands.add(tuple(sorted(combo)))
    for key in cands:
        if key in pool:
            continue
        col = aspace.column(Action(tuple(key)), "frequent")
        if col.cover.any():
            pool.add(col)
    return coverable


def search(aspace: ActionSpace, k: int | None, solver, deadline: Deadline, *, min_coverage: float | None = None,
           n_solutions: int = 5, progress: bool = False, tie_break_time: float | None = 2.0,
           max_seed_mips: int = 300) -> SearchResult:
    """Seeds, the fewest actions (``k=None``) and the curve ``1 … k`` (module docstring)."""
    mip = ActionMIP(aspace, solver)
    pool = ColumnPool(aspace.n_types)
    coverable = seed_pool(aspace, mip, pool, deadline, max_seed_mips=max_seed_mips, progress=progress)
    m = aspace.m
    out = SearchResult(pool, coverable)
    out.stats["seed_columns"] = len(pool)
    levels = [PoolLevel(), ExactLevel(mip, n_solutions)]
    n_cov = float(m[coverable].sum())
    if not coverable.any():
        return out
    K = k
    if k is None:
        master = SetCoverMaster(aspace.n_types, solver, active=coverable, weights=m)
        sync_master(master, pool)
        cg = column_generation(master, pool, levels, deadline=deadline)
        ip = solve_integer_master(pool.matrix(), pool.cost_matrix(), "set_cover", solver, m=m, active=coverable,
                                  time_limit=deadline.left(), tie_break=False)
        lower = max(1, math.ceil(cg.bound - EPS))
        out.min_k, out.min_k_bound = int(ip.objective), min(lower, int(ip.objective))
        out.stats.update(set_cover_iterations=cg.iterations, set_cover_lp=cg.lp_value, set_cover_levels=cg.levels)
        K = out.min_k
    master = MaxCoverageMaster(aspace.n_types, solver, 1, active=coverable, weights=m)
    sync_master(master, pool)
    prev = None
    for kk in progress_bar(range(1, K + 1), enabled=progress, total=K, desc="curve k"):
        master.set_budget(kk)
        exact_upper = None
        if kk == 1:
            res = mip.best(np.where(coverable, m, 0.0), time_limit=deadline.left(), n_solutions=n_solutions)
            for act in res.actions:
                pos = pool.add(aspace.column(act, "best-single"))
                if pos is not None:
                    master.add(pool.columns[pos])
                    pool.in_master[pos] = True
            if res.bound is not None:
                exact_upper = res.bound
        cg = column_generation(master, pool, levels, deadline=deadline)
        upper = min(cg.bound, n_cov)
        if exact_upper is not None:
            upper = min(upper, exact_upper)
        if prev is not None:
            upper = max(upper, prev.covered)      # never below what k-1 actions already cover
        if k is None and kk == K and out.min_k_bound == K:
            upper = n_cov
        starts = [] if prev is None else [prev.chosen]
        if min_coverage is not None and kk == K and k is not None:
            target = math.ceil(min_coverage * len(aspace.S) - 1e-9)
            ip = solve_integer_master(pool.matrix(), pool.cost_matrix(), "max_coverage", solver, m=m,
                                      active=coverable, k=kk, min_cover=target, time_limit=deadline.left(),
                                      tie_break_time=tie_break_time, starts=starts)
            if not ip.status.has_solution:
                ip = solve_integer_master(pool.matrix(), pool.cost_matrix(), "max_coverage", solver, m=m,
                                          active=coverable, k=kk, time_limit=deadline.left(),
                                          tie_break_time=tie_break_time, starts=starts)
        else:
            ip = solve_integer_master(pool.matrix(), pool.cost_matrix(), "max_coverage", solver, m=m,
                                      active=coverable, k=kk, time_limit=deadline.left(),
                                      tie_break_time=tie_break_time, starts=starts)
        if not ip.status.has_solution:
            break
        ub = math.floor(upper + EPS)
        certified = ip.objective >= ub - 1e-9 and ip.status == Status.OPTIMAL and cg.status != Status.TIME_LIMIT
        point = CurvePoint(kk, ip.chosen, ip.assign, float(ip.objective), float(ip.cost), float(ub),
                           Status.OPTIMAL if certified else (Status.TIME_LIMIT if deadline.passed else Status.FEASIBLE))
        out.curve.append(point)
        out.stats.setdefault("curve_iterations", []).append(cg.iterations)
        out.stats.setdefault("cost_proven", []).append(bool(ip.cost_optimal))
        prev = point
    out.stats["pool_columns"] = len(pool)
    out.stats["pricing_mips"] = mip.calls
    return out
