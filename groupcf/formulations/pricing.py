r"""Pricing problem of the column generation, and the two auxiliary MIPs (paper §4.2–4.3).

**Pricing MIP** (paper eqs. 23–28, with the per-feature agreement rows of design §3).
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
pairwise incompatible types (:mod:`groupcf.formulations.conflicts`) tighten the LP
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

:class:`BestChangeSet` solves it exactly by enumeration when the candidate features are
few and as a MIP otherwise.

**Auxiliary MIP 2 — fix the assignment, find another counterfactual.** The pricing MIP
with :math:`z_i \ge 1` for the types of a column: another :math:`v` that covers them all
and as much further dual value as possible (:meth:`PricingMIP.solve` with ``fix_cover``).
"""
from __future__ import annotations

import itertools
import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from ..solvers import make_backend
from ..solvers.base import INF, Solution, Status, VarType
from .blocks import add_agreement, add_counterfactual
from .conflicts import conflict_cliques
from .rows import RowBuffer

log = logging.getLogger(__name__)


@dataclass
class PricingResult:
    columns: list            # candidate columns (groupcf.group.problem.Column), best first
    best_value: float        # dual value of the MIP's incumbent (0 without a solution)
    dual_bound: float        # proven upper bound on the best column value (inf if unknown)
    optimal: bool            # the MIP was solved to optimality
    time: float
    solution: Solution


class PricingMIP:
    """The pricing MIP, built once on its own backend; re-solved with new duals."""

    def __init__(self, problem, solver, n_solutions: int = 10, mip_gap: float = 1e-6, oracle=None):
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
        self.cliques = conflict_cliques(problem, np.ones(problem.n_types, dtype=bool), oracle)
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
            for x in [sol.x, *sol.pool]:
                v = x[self.block.v]
                F = np.flatnonzero(x[self.block.f] > 0.5)
                col = p.make_column(v, F, "aux-cover" if fix_cover is not None else "pricing")
                if p.is_positive(col.v) and col.cover.any():
                    cols.append(col)
        best = float(sol.objective) if sol.status.has_solution else 0.0
        bound = sol.dual_bound if sol.dual_bound is not None else (best if sol.status.value == "optimal" else INF)
        if sol.status.value == "optimal":
            bound = min(bound, best + 1e-9 + 1e-6 * abs(best)) if math.isfinite(bound) else best
        return PricingResult(cols, best, float(bound), sol.status.value == "optimal",
                             time.perf_counter() - t0, sol)


class BestChangeSet:
    """Auxiliary MIP 1: for a fixed counterfactual, the change set of maximum dual value."""

    #: enumerate change sets when there are at most this many
    MAX_ENUMERATION = 20000

    def __init__(self, problem, solver):
        self.problem = problem
        self.solver = solver
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
        cand = np.flatnonzero(D.any(axis=0))
        k = min(p.Tmax, len(cand))
        if math.comb(len(cand), k) <= self.MAX_ENUMERATION:
            best_F, best_val = (), -1.0
            Dc = D[:, cand]
            for F in itertools.combinations(range(len(cand)), k):
                outside = np.ones(len(cand), dtype=bool)
                outside[list(F)] = False
                val = float(wt[~Dc[:, outside].any(axis=1)].sum())
                if val > best_val:
                    best_F, best_val = F, val
            return frozenset(int(cand[j]) for j in best_F), best_val
        return self._mip(D[:, cand], wt, cand, k)

    def _mip(self, D, wt, cand, k) -> tuple[frozenset, float]:
        be = make_backend(self.solver)
        f = be.add_vars(D.shape[1], 0.0, 1.0, VarType.BINARY)
        z = be.add_vars(D.shape[0], 0.0, 1.0, VarType.CONTINUOUS)
        rows = RowBuffer()
        for i, j in zip(*np.nonzero(D)):
            rows.add([z[i], f[j]], [1.0, -1.0], -INF, 0.0)
        rows.add(f, 1.0, -INF, float(k))
        rows.flush(be)
        be.set_objective(z, wt, sense="max")
        sol = be.solve()
        F = frozenset(int(cand[j]) for j in np.flatnonzero(sol.x[f] > 0.5)) if sol.status.has_solution else frozenset()
        return F, float(sol.objective or 0.0)


class LinearSeedPricing:
    r"""Exact pricing for a logistic (linear) model, one small MIP per *seed* type.

    Every column with positive dual value covers some type :math:`i` with
    :math:`w_i > 0` (its *seed*). With the seed fixed, a type :math:`j` is covered iff
    the features where it differs from :math:`i`, :math:`D_{ij}`, all lie in the change
    set, and the class is feasible iff the seed's best completion on :math:`F` is
    positive — for a linear score :math:`s_i + \sum_{l \in F} G_{il} \ge \tau + \varepsilon`
    with :math:`G_{il} \ge 0` the largest score gain from freeing feature :math:`l` of
    :math:`x_i` (best allowed category minus the current one). So

    .. math::

        \max \sum_{j \in J_i} w_j z_j \quad\text{s.t.}\quad
        z_j \le f_l \ (l \in D_{ij}),\quad \sum_l f_l \le T_{\max},\quad
        \sum_l G_{il} f_l \ge \tau + \varepsilon - s_i,\quad f_l = 0 \ (l \text{ immutable}),

    over the compatible types :math:`J_i = \{j : w_j > 0, |D_{ij}| \le T_{\max}\}`; its
    coverage rows are exact (no big-M, no point variables), so it is tiny and tight.
    Seeds are taken in decreasing order of the trivial bound :math:`\sum_{j \in J_i} w_j`,
    and a seed whose bound cannot beat 1 is skipped: when no seed yields a column of value
    above 1 the restricted master is proven optimal. Valid without increase-only features
    (with them, a covered type also bounds the point from below: use
    :class:`PricingMIP`).
    """

    def __init__(self, problem, solver):
        self.problem, self.solver = problem, solver
        emb = problem.tm.embedding
        W, b = emb.layers[0]
        w = W[0]
        space = problem.space
        self.mutable = np.array([not f.immutable for f in space])
        Z = problem.Z
        self.s = Z @ w + float(b[0])
        self.G = np.zeros((problem.n_types, len(space)))
        for l, f in enumerate(space):
            cols = f.columns
            if f.encoding == "continuous":
                best = np.maximum(w[cols][0] * 0.0, w[cols][0] * 1.0)
            elif f.encoding == "binary":
                best = max(0.0, float(w[cols][0]))
            else:
                best = float(w[cols].max())
            self.G[:, l] = best - Z[:, cols] @ w[cols]
        self.D = np.abs(problem.codes[:, None, :] - problem.codes[None, :, :]) > 1e-9

    @staticmethod
    def applicable(problem) -> bool:
        from ..embeddings.network import ReLUNetwork

        emb = problem.tm.embedding
        linear = isinstance(emb, ReLUNetwork) and len(emb.layers) == 1
        inc = any(f.increase_only and not f.immutable for f in problem.space)
        return linear and not inc

    def solve(self, w: np.ndarray, max_columns: int = 10, eps: float = 1e-6) -> PricingResult:
        t0 = time.perf_counter()
        p = self.problem
        T = p.Tmax
        need = p.score_lo - self.s
        compat = (self.D.sum(axis=2) <= T) & ~self.D[:, :, ~self.mutable].any(axis=2) & (w > 0)[None, :]
        ub = compat @ w
        seeds = [i for i in np.argsort(-ub) if w[i] > 0]
        found: dict[bytes, tuple[float, object]] = {}
        bound = 0.0
        for i in seeds:
            if ub[i] <= 1 + eps:
                bound = max(bound, float(ub[i]))
                break                      # sorted: no later seed can price out
            if len(found) >= max_columns:
                bound = INF                # not all seeds examined: no proof this round
                break
            F, val = self._seed(i, w, compat[i], need[i])
            bound = max(bound, val)
            if F is None or val <= 1 + eps:
                continue
            score, v = self._completion(i, F)
            col = p.make_column(v, F, "linear-seed")
            if p.is_positive(col.v) and float(col.cover @ w) > 1 + eps:
                found.setdefault(col.key(), (float(col.cover @ w), col))
        cols = [c for _, c in sorted(found.values(), key=lambda t: -t[0])]
        best = max((v for v, _ in found.values()), default=0.0)
        sol = Solution(status=Status.OPTIMAL, objective=best)
        return PricingResult(cols, best, max(bound, best), bound != INF, time.perf_counter() - t0, sol)

    def _seed(self, i: int, w: np.ndarray, J: np.ndarray, need: float):
        """Best change set for seed ``i``: ``(F, value)`` or ``(None, 0)`` if infeasible."""
        p = self.problem
        L = len(p.space)
        J = np.flatnonzero(J)
        be = make_backend(self.solver, mip_gap=1e-9)
        f = be.add_vars(L, 0.0, self.mutable.astype(float), VarType.BINARY)
        z = be.add_vars(len(J), 0.0, 1.0, VarType.CONTINUOUS)
        rows = RowBuffer()
        for a, j in enumerate(J):
            for l in np.flatnonzero(self.D[i, j]):
                rows.add([z[a], f[l]], [1.0, -1.0], -INF, 0.0)
        rows.add(f, 1.0, -INF, float(p.Tmax))
        if need > 0:
            rows.add(f, self.G[i], need, INF)
        rows.flush(be)
        be.set_objective(z, w[J], sense="max")
        sol = be.solve()
        if not sol.status.has_solution:
            return None, 0.0
        F = frozenset(int(l) for l in np.flatnonzero(sol.x[f] > 0.5))
        bound = sol.dual_bound if sol.dual_bound is not None else sol.objective
        return F, float(max(sol.objective, bound))

    def _completion(self, i: int, F):
        """The seed's best completion on ``F`` (closed form)."""
        p = self.problem
        emb_w = p.tm.embedding.layers[0][0][0]
        v = p.Z[i].copy()
        for l in F:
            f = p.space.features_[l]
            cols = f.columns
            if f.encoding == "onehot":
                v[cols] = 0.0
                v[cols[int(np.argmax(emb_w[cols]))]] = 1.0
            else:
                v[cols] = 1.0 if emb_w[cols][0] > 0 else 0.0
        return float(emb_w @ v), v
