r"""Pricing problem of the column generation, and the two auxiliary MIPs (paper §4.2–4.3).

**Pricing MIP** (paper eqs. 23–28, with the per-feature agreement rows of :mod:`groupcf.formulations.blocks`).
Given the master's duals :math:`w_i \ge 0` (one per instance type, already multiplied by
nothing: the master has one covering row per type), find a counterfactual of maximum
dual value:

.. math::

    \max \sum_{i} w_i z_i \quad\text{s.t.}\quad
    & v \text{ one-hot},\ \mathrm{score}(v) \ge \tau + \varepsilon,\
      \textstyle\sum_l f_l \le T_{\max},\ f_l = 0 \ (l \text{ immutable}) \\
    & z_i \le v_{h(i,l)} + f_l \quad (l \text{ one-hot}),\qquad
      z_i \le v_l + f_l \ / \ z_i \le 1 - v_l + f_l \quad (l \text{ binary}) \\
    & z_i \le \textstyle\sum_{h \ge h(i,l)} v_h \quad (l \text{ increase-only}),\qquad
      z_i \in [0, 1],\ v, f \text{ binary}.

:math:`z` may be continuous: for integral :math:`(v, f)` every right-hand side is 0 or 1,
so an optimal :math:`z` is integral. Clique rows :math:`\sum_{i \in Q} z_i \le 1` over
pairwise incompatible types (:mod:`groupcf.group.formulations.conflicts`) tighten the LP
relaxation. A column enters the master when its value exceeds 1
(its reduced cost :math:`1 - \sum_i w_i z_i` is negative). The model is built once; each
iteration only changes the objective.

**Auxiliary MIP 1 — fix the counterfactual, find the best assignment.** For a fixed
:math:`v`, type :math:`i` can be covered iff its set of differing features
:math:`D_i \subseteq F` (and no increase-only feature would have to decrease), so the best
change set solves a small maximum-coverage problem:

.. math::

    \max \sum_i w_i z_i \quad\text{s.t.}\quad z_i \le f_l \ (l \in D_i),\quad
    \textstyle\sum_l f_l \le T_{\max},\quad f_l = 0 \ (l \text{ immutable}).

:class:`BestChangeSet` solves it exactly by the depth-first search of
:func:`~groupcf.group.formulations.subsets.max_weight_union` (the covered types are those whose
difference sets fit together in :math:`T_{\max}` features), and beyond its node limit as
the MIP of :mod:`~groupcf.group.formulations.coverage` (time-limited: it is a heuristic).

**Auxiliary MIP 2 — fix the assignment, find another counterfactual.** The pricing MIP
with :math:`z_i \ge 1` for the types of a column: another :math:`v` that covers them all
and as much further dual value as possible (:meth:`PricingMIP.solve` with ``fix_cover``).
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from ...formulations.blocks import add_agreement, add_counterfactual
from ...formulations.rows import RowBuffer
from ...solvers import make_backend
from ...solvers.base import INF, Solution, Status, VarType
from . import subsets
from .conflicts import conflict_cliques
from .coverage import add_inclusion_coverage

log = logging.getLogger(__name__)


@dataclass
class PricingResult:
    """Candidate columns of one pricing solve (best first) and the proven bound on their value."""

    columns: list            # candidate columns (groupcf.group.problem.Column), best first
    dual_bound: float        # proven upper bound on the best column value (inf if unknown)
    optimal: bool            # the MIP was solved to optimality
    time: float
    solution: Solution


class PricingMIP:
    """The pricing MIP, built once on its own backend; re-solved with new duals."""

    def __init__(self, problem, solver, n_solutions: int = 10, mip_gap: float = 1e-6, completions=None):
        self.problem = problem
        self.backend = make_backend(solver, mip_gap=mip_gap)
        self.n_solutions = n_solutions
        be, space = self.backend, problem.space
        self.block = add_counterfactual(be, space, problem.tm.embedding, problem.score_lo, Tmax=problem.Tmax)
        self.z = be.add_vars(problem.n_types, lb=0.0, ub=1.0, vtype=VarType.CONTINUOUS)
        rows = RowBuffer()
        for i in range(problem.n_types):
            add_agreement(rows, space, self.block, problem.Z[i], z=int(self.z[i]))
        # conflicts: pairwise incompatible types (cliques) are never covered together
        self.cliques = conflict_cliques(problem, np.ones(problem.n_types, dtype=bool), completions)
        for Q in self.cliques:
            rows.add(self.z[Q], 1.0, -INF, 1.0)
        rows.flush(be)

    def solve(self, w: np.ndarray, time_limit: float | None = None, fix_cover: np.ndarray | None = None) -> PricingResult:
        """Maximise ``Σ w_i z_i``; with ``fix_cover`` (bool over types) those types must be
        covered (auxiliary MIP 2)."""
        t0 = time.perf_counter()
        be, p = self.backend, self.problem
        be.set_objective(self.z, w, sense="max")
        # types without dual value cannot raise the objective: switch them off (presolve
        # then drops their rows) unless they must be covered
        off = w <= 0
        if fix_cover is not None:
            off &= ~fix_cover
        be.set_bounds(self.z, 0.0, np.where(off, 0.0, 1.0))
        if fix_cover is not None:
            be.set_bounds(self.z[fix_cover], 1.0, 1.0)
        be.options.time_limit = time_limit
        k = self.n_solutions if be.capabilities.multiple_solutions else 1
        sol = be.solve(n_solutions=k)
        if fix_cover is not None:
            be.set_bounds(self.z[fix_cover], 0.0, 1.0)
        cols = []
        if sol.status.has_solution:
            for x in [sol.values, *sol.pool]:
                v = x[self.block.v]
                F = np.flatnonzero(x[self.block.f] > 0.5)
                col = p.make_column(v, F, "aux-cover" if fix_cover is not None else "pricing")
                if p.is_positive(col.v) and col.cover.any():
                    cols.append(col)
        best = float(sol.objective) if sol.status.has_solution and sol.objective is not None else 0.0
        optimal = sol.status == Status.OPTIMAL
        bound = sol.dual_bound if sol.dual_bound is not None else (best if optimal else INF)
        if optimal:
            bound = min(bound, best + 1e-9 + 1e-6 * abs(best)) if math.isfinite(bound) else best
        return PricingResult(cols, float(bound), optimal, time.perf_counter() - t0, sol)


class BestChangeSet:
    """Auxiliary MIP 1: for a fixed counterfactual, the change set of maximum dual value."""

    def __init__(self, problem, solver, time_limit: float | None = 5.0, node_limit: int = 200_000):
        self.problem = problem
        self.solver = solver
        self.node_limit = node_limit    # the combinatorial search first ...
        self.time_limit = time_limit    # ... else the MIP, best change set found in this time
        self.mutable = np.array([not f.immutable for f in problem.space])

    def best(self, v: np.ndarray, w: np.ndarray) -> tuple[frozenset, float]:
        """``(F, value)`` maximising the dual value of the types covered by ``(v, F)``."""
        p = self.problem
        ok = p.coverable(v) & (w > 0)
        diff = p.differences(v)
        # a type needing an immutable feature changed can never be covered
        ok &= ~np.any(diff[:, ~self.mutable], axis=1)
        ok &= diff.sum(axis=1) <= p.Tmax
        if not ok.any():
            return frozenset(), 0.0
        D, wt = diff[ok], w[ok]
        if D.shape[1] <= 62:
            # the covered types are those whose difference sets fit together in Tmax
            masks = subsets.masks_of(D)
            val, chosen, complete = subsets.max_weight_union(masks, wt, p.Tmax, -1.0, node_limit=self.node_limit)
            if complete:
                return frozenset(subsets.bits(int(np.bitwise_or.reduce(masks[chosen])))), float(val)
        cand = np.flatnonzero(D.any(axis=0))
        return self._mip(D[:, cand], wt, cand, min(p.Tmax, len(cand)))

    def _mip(self, D, wt, cand, k) -> tuple[frozenset, float]:
        be = make_backend(self.solver, time_limit=self.time_limit)
        f, z = add_inclusion_coverage(be, D, k)
        be.set_objective(z, wt, sense="max")
        sol = be.solve()
        F = frozenset(int(cand[j]) for j in np.flatnonzero(sol.values[f] > 0.5)) if sol.status.has_solution else frozenset()
        return F, float(sol.objective or 0.0)
