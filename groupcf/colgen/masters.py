r"""Restricted masters of the generic column-generation engine, written once against the
solver :class:`~groupcf.solvers.base.Backend` interface.

Elements :math:`i \in E` (people, instance types) carry weights :math:`m_i > 0` (their
multiplicities); only the *active* ones (:math:`A \subseteq E`, e.g. the coverable) count.
A column :math:`a` covers :math:`C_a \subseteq E` and has a weight :math:`w_a` (1 here).

**Set cover** (:class:`SetCoverMaster`, the fewest columns covering every active element)

.. math::

    z_{SC} = \min \sum_a w_a \lambda_a \quad\text{s.t.}\quad
    \sum_{a \ni i} \lambda_a \ge 1 \ (i \in A), \qquad \lambda \ge 0 .

Its LP duals :math:`\pi_i \ge 0` price a column at :math:`\pi(C_a) = \sum_{i\in C_a}\pi_i`;
it improves when :math:`\pi(C_a) > w_a`. With :math:`\beta \ge \max_a \pi(C_a)/w_a` over
*all* columns (a pricing dual bound), :math:`\pi/\max(1,\beta)` is dual feasible for the
full LP, so **Farley's bound** :math:`z_{RMP}/\max(1, \beta) \le z^*_{LP} \le z^*_{IP}`
holds at every iteration, and :math:`\lceil z_{RMP} \rceil` once pricing proves
:math:`\beta \le 1`.

**Budgeted maximum coverage** (:class:`MaxCoverageMaster`, the most weight covered by at
most :math:`k` columns), written as a minimisation for the backends' dual signs:

.. math::

    z_{MC} = \max \sum_{i \in A} m_i u_i \quad\text{s.t.}\quad
    \sum_{a \ni i} \lambda_a - u_i \ge 0 \ (\pi_i), \qquad
    -\sum_a w_a \lambda_a \ge -k \ (\mu), \qquad 0 \le u_i \le 1,\ \lambda \ge 0 .

LP dual: :math:`\min \sum_i \rho_i + k\mu` s.t. :math:`\pi_i + \rho_i \ge m_i`,
:math:`\pi(C_a) \le \mu w_a` for every column. A column improves when
:math:`\pi(C_a) > \mu w_a`. Given the restricted duals :math:`(\pi, \rho, \mu)` and
:math:`\beta \ge \max_a \pi(C_a)/w_a` over all columns, :math:`(\pi, \rho, \max(\mu,\beta))`
is dual feasible for the full LP, so (Lagrangian / Farley-type bound)

.. math::

    z^*_{IP} \le z^*_{LP} \le z_{RMP} + k \max(0, \beta - \mu),

valid at every iteration and equal to :math:`z_{RMP}` when pricing proves
:math:`\beta \le \mu`. The integer optimum is at most its floor when weights are integers.

**Integer masters** (:func:`solve_integer_master`): stage 1 solves the master as a MIP
over the pool; stage 2 breaks ties by total element cost — with assignment variables
:math:`x_{ia} \le \lambda_a`, :math:`\sum_a x_{ia} = u_i`, it minimises
:math:`\sum_{i,a} m_i d_{ia} x_{ia}` with stage 1's objective fixed (fewest columns, or
coverage at least the optimum). With ``min_cover`` stage 1 is skipped: the cheapest
:math:`\le k` columns covering at least that weight.
"""
from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..solvers import make_backend
from ..solvers.base import INF, Status, VarType
from ..utils import EPS
from .pool import Column

__all__ = ["Duals", "IntegerResult", "LPResult", "MaxCoverageMaster", "SetCoverMaster", "solve_integer_master"]


@dataclass
class Duals:
    """Duals of one restricted-master LP: ``pi`` per element (``≥ 0``) and ``price`` per
    unit of column weight; a column improves when ``pi·cover − price·weight > EPS``."""

    pi: np.ndarray
    price: float

    def reduced(self, col: Column) -> float:
        return col.value(self.pi) - self.price * col.weight

    def reduced_many(self, C: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return C.astype(float) @ self.pi - self.price * np.asarray(weights, dtype=float)


@dataclass
class LPResult:
    """One restricted-master LP solve: status, value and duals."""

    status: Status
    value: float | None = None       # the master's LP value in its own sense
    duals: Duals | None = None
    x: np.ndarray | None = None      # λ per master column


class _Master(abc.ABC):
    """A restricted master over a growing list of columns (LP, duals, bounds)."""

    sense = "min"

    def __init__(self, n_elements: int, solver, active=None, weights=None):
        self.n = int(n_elements)
        self.solver = solver
        self.active = np.ones(self.n, bool) if active is None else np.asarray(active, bool).copy()
        self.m = np.ones(self.n) if weights is None else np.asarray(weights, dtype=float)
        self.backend = make_backend(solver)
        self.backend.require("lp_duals", "column generation (the master's duals price columns)")
        self.columns: list[Column] = []
        self.lam = np.zeros(0, dtype=np.int64)

    @property
    def n_columns(self) -> int:
        return len(self.columns)

    def add(self, col: Column) -> None:
        """Add one column to the live LP (warm re-solve)."""
        rows, coefs, obj = self._column_rows(col)
        idx = self.backend.add_column(obj, rows, coefs, 0.0, INF)
        self.columns.append(col)
        self.lam = np.append(self.lam, idx)

    @abc.abstractmethod
    def _column_rows(self, col: Column): ...

    @abc.abstractmethod
    def solve_lp(self, time_limit: float | None = None) -> LPResult: ...

    @abc.abstractmethod
    def bound(self, value: float, duals: Duals, beta: float) -> float:
        """A valid bound on the full LP (so on the integer optimum) from the restricted
        LP value and ``beta ≥ max_a π(C_a)/w_a`` over every column (module docstring)."""

    def better(self, a: float, b: float) -> float:
        """The tighter of two bounds (largest lower / smallest upper)."""
        return max(a, b) if self.sense == "min" else min(a, b)

    def meets(self, value: float, bound: float) -> bool:
        """Whether an LP value attains a valid bound (then it is the LP optimum)."""
        return value >= bound - EPS if self.sense == "max" else value <= bound + EPS

    @abc.abstractmethod
    def trivial_bound(self) -> float: ...

    def _solve(self, time_limit):
        self.backend.options.time_limit = time_limit
        return self.backend.solve()


class SetCoverMaster(_Master):
    """The set-cover LP master (module docstring): fewest columns covering every active
    element. Columns must cover every active element before the first LP solve."""

    sense = "min"

    def __init__(self, n_elements: int, solver, active=None, weights=None):
        super().__init__(n_elements, solver, active, weights)
        lo = self.active.astype(float)
        self.rows = self.backend.add_rows(sp.csr_matrix((self.n, 0)), lo, np.full(self.n, INF))

    def _column_rows(self, col):
        rows = self.rows[np.flatnonzero(col.cover & self.active)]
        return rows, np.ones(len(rows)), float(col.weight)

    def solve_lp(self, time_limit=None) -> LPResult:
        sol = self._solve(time_limit)
        if sol.status != Status.OPTIMAL:
            return LPResult(sol.status)
        pi = np.maximum(np.asarray(sol.row_duals)[self.rows], 0.0) * self.active
        return LPResult(Status.OPTIMAL, float(sol.objective), Duals(pi, 1.0), np.asarray(sol.x)[self.lam])

    def bound(self, value, duals, beta):
        return value / max(1.0, beta)

    def trivial_bound(self) -> float:
        return 1.0 if self.active.any() else 0.0


class MaxCoverageMaster(_Master):
    """The budgeted maximum-coverage LP master (module docstring); ``set_budget`` changes
    ``k`` in place, keeping every column (the curve k = 1, 2, ... reuses them)."""

    sense = "max"

    def __init__(self, n_elements: int, solver, k: int, active=None, weights=None):
        super().__init__(n_elements, solver, active, weights)
        be = self.backend
        self.u = be.add_vars(self.n, 0.0, self.active.astype(float), obj=-self.m)
        A = sp.csr_matrix((-np.ones(self.n), (np.arange(self.n), self.u)), shape=(self.n, be.num_vars))
        self.rows = be.add_rows(A, np.zeros(self.n), np.full(self.n, INF))
        self.budget = int(be.add_rows(sp.csr_matrix((1, be.num_vars)), [-float(k)], [INF])[0])
        self.k = int(k)

    def set_budget(self, k: int) -> None:
        self.k = int(k)
        self.backend.set_row_bounds([self.budget], -float(k), INF)

    def _column_rows(self, col):
        rows = self.rows[np.flatnonzero(col.cover)]
        return (np.append(rows, self.budget), np.append(np.ones(len(rows)), -float(col.weight)), 0.0)

    def solve_lp(self, time_limit=None) -> LPResult:
        sol = self._solve(time_limit)
        if sol.status != Status.OPTIMAL:
            return LPResult(sol.status)
        d = np.asarray(sol.row_duals)
        pi = np.maximum(d[self.rows], 0.0) * self.active
        mu = max(0.0, float(d[self.budget]))
        return LPResult(Status.OPTIMAL, -float(sol.objective), Duals(pi, mu), np.asarray(sol.x)[self.lam])

    def bound(self, value, duals, beta):
        return value + self.k * max(0.0, beta - duals.price)

    def trivial_bound(self) -> float:
        return float(self.m[self.active].sum())


# ------------------------------------------------------------------ integer masters
@dataclass
class IntegerResult:
    """The integer master's answer over a pool of columns."""

    status: Status
    chosen: list[int] = field(default_factory=list)        # column positions
    assign: np.ndarray | None = None                        # per element: position or -1
    objective: float | None = None                          # columns used / weight covered
    cost: float = 0.0                                       # Σ m_i d_ia over assigned elements
    bound: float | None = None                              # stage 1's dual bound
    cost_optimal: bool = False                              # stage 2 proved the least cost


def solve_integer_master(C: np.ndarray, D: np.ndarray, mode: str, solver, *, m=None, active=None,
                         k: int | None = None, min_cover: float | None = None,
                         time_limit: float | None = None, tie_break: bool = True,
                         tie_break_time: float | None = None, starts=(), upper: float | None = None
                         ) -> IntegerResult:
    """The integer master over the pool (bool ``C``, columns × elements; costs ``D``).

    ``mode`` is ``"set_cover"`` (fewest columns covering every active element) or
    ``"max_coverage"`` (most weight covered by ``≤ k`` columns; with ``min_cover``: the
    cheapest ``≤ k`` columns covering at least that weight). Stage 2 (``tie_break``)
    minimises the total element cost with stage 1's objective fixed (module docstring),
    within ``tie_break_time`` seconds (started from stage 1's solution; its result says
    whether the cost is proven least in ``cost_optimal``). Before that MIP, the best of
    stage 1's selection and ``starts`` (other selections, e.g. the previous ``k``'s) is
    improved by local search (:func:`~groupcf.colgen.local_search.improve`). ``upper``:
    a proven upper bound on the weight ``k`` columns cover (``"max_coverage"``); when one
    of ``starts`` reaches it, that start is stage 1's optimum and its MIP is skipped.
    """
    from ..utils import Deadline

    C = np.asarray(C, dtype=bool)
    n_cols, n = C.shape
    m = np.ones(n) if m is None else np.asarray(m, dtype=float)
    active = np.ones(n, bool) if active is None else np.asarray(active, bool)
    C = C & active[None, :]
    deadline = Deadline(time_limit)
    if n_cols == 0:
        return IntegerResult(Status.OPTIMAL if mode == "max_coverage" and min_cover is None else Status.INFEASIBLE,
                             [], np.full(n, -1), 0.0, 0.0, 0.0)
    bound = None
    known = _reaching(C, D, m, k, upper, starts) if mode == "max_coverage" and min_cover is None else None
    if known is not None:
        res = known
        if not tie_break or deadline.passed:
            return res
    elif min_cover is None:
        be = make_backend(solver, time_limit=deadline.left())
        lam = be.add_vars(n_cols, 0.0, 1.0, VarType.BINARY, obj=1.0 if mode == "set_cover" else 0.0)
        if mode == "set_cover":
            A = sp.csr_matrix(C.T[active].astype(float))
            be.add_rows(A, np.ones(A.shape[0]), np.full(A.shape[0], INF))
        else:
            assert k is not None   # max_coverage: at most k columns
            u = be.add_vars(n, 0.0, active.astype(float), obj=-m)
            A = sp.hstack([sp.csr_matrix(C.T.astype(float)), -sp.eye(n)], format="csr")
            be.add_rows(A, np.zeros(n), np.full(n, INF))
            be.add_row(lam, np.ones(n_cols), -INF, float(k))
        sol = be.solve()
        if not sol.status.has_solution:
            return IntegerResult(sol.status)
        chosen = np.flatnonzero(np.asarray(sol.x)[lam] > 0.5)
        if mode == "set_cover":
            obj = float(len(chosen))
            bound = sol.dual_bound if sol.dual_bound is not None and math.isfinite(sol.dual_bound) else None
        else:
            obj = float(m[C[chosen].any(axis=0)].sum())
            bound = -sol.dual_bound if sol.dual_bound is not None and math.isfinite(sol.dual_bound) else None
            del u
        if sol.status == Status.OPTIMAL and bound is None:
            bound = obj
        status = sol.status
        assign, cost = _greedy_assign(C, D, m, chosen)
        res = IntegerResult(status, chosen.tolist(), assign, obj, cost, bound)
        if not tie_break or deadline.passed:
            return res
    else:
        res = None
        if mode != "set_cover" and k is not None:
            # no stage 1, and k = 1 has no previous point to start from: a greedy selection
            # is one more start, so that stage 2 has a MIP start and, when it finds nothing
            # within the tie-break time, a fallback that meets the share (not "no solution",
            # which made the caller fall back to plain max coverage)
            from .local_search import greedy

            starts = [*starts, greedy(C, m, int(k))]
    res = _local(C, D, m, active, mode, k, min_cover, res, starts)
    left = deadline.left()
    stage2 = Deadline(tie_break_time if left is None else
                      min(left, tie_break_time if tie_break_time is not None else INF))
    return _min_cost_stage(C, D, m, active, mode, k, min_cover, res, solver, stage2)


def _reaching(C, D, m, k, upper, starts) -> IntegerResult | None:
    """The first of ``starts`` (at most ``k`` columns) covering ``upper``, as a proven
    stage-1 optimum, or ``None``."""
    if upper is None:
        return None
    for start in starts:
        chosen = np.asarray(list(dict.fromkeys(int(j) for j in start))[:int(k)], dtype=int)
        covered = float(m[C[chosen].any(axis=0)].sum()) if len(chosen) else 0.0
        if covered >= upper - 1e-9:
            assign, cost = _greedy_assign(C, D, m, chosen)
            return IntegerResult(Status.OPTIMAL, chosen.tolist(), assign, covered, cost, float(upper))
    return None


def _local(C, D, m, active, mode, k, min_cover, first, starts):
    """The cheapest of ``first`` and ``starts`` meeting stage 1's objective, improved by
    local search; ``first`` (or ``None``) when no candidate is feasible."""
    from .local_search import improve, selection_value

    if mode == "set_cover":
        target, k_max = float(m[active].sum()), int(first.objective)
    else:
        target = first.objective if first is not None else float(min_cover)
        k_max = int(k)
    cands = ([first.chosen] if first is not None else []) + [list(s)[:k_max] for s in starts]
    best = None
    for cand in cands:
        cov, cost = selection_value(C, D, m, cand)
        if cov >= target - 1e-9 and (best is None or cost < best[1]):
            best = (cand, cost)
    if best is None:
        return first
    chosen = improve(C, D, m, best[0], target, k_max)
    assign, cost = _greedy_assign(C, D, m, np.array(chosen, dtype=int))
    obj = float(len(chosen)) if mode == "set_cover" else float(m[assign >= 0].sum())
    status = first.status if first is not None else Status.FEASIBLE
    return IntegerResult(status, chosen, assign, obj, cost, None if first is None else first.bound)


def _greedy_assign(C, D, m, chosen):
    """Each element to its cheapest chosen covering column (−1 if none)."""
    n = C.shape[1]
    assign = np.full(n, -1)
    if len(chosen) == 0:
        return assign, 0.0
    Dc = np.where(C[chosen], D[chosen], np.inf)
    best = Dc.argmin(axis=0)
    ok = np.isfinite(Dc.min(axis=0))
    assign[ok] = np.asarray(chosen)[best[ok]]
    cost = float((m[ok] * Dc.min(axis=0)[ok]).sum())
    return assign, cost


def _min_cost_stage(C, D, m, active, mode, k, min_cover, first: IntegerResult | None, solver, deadline):
    """Stage 2: the least total element cost with stage 1's objective fixed (or, with
    ``min_cover``, at least that covered weight with ``≤ k`` columns)."""
    n_cols, n = C.shape
    ai, ii = np.nonzero(C)
    be = make_backend(solver, time_limit=deadline.left())
    lam = be.add_vars(n_cols, 0.0, 1.0, VarType.BINARY)
    # x continuous: with λ fixed, the cheapest open column is an optimal assignment
    x = be.add_vars(len(ai), 0.0, 1.0, VarType.CONTINUOUS, obj=m[ii] * D[ai, ii])
    nx = len(ai)
    # x_ia <= lam_a
    A = sp.csr_matrix((np.r_[np.ones(nx), -np.ones(nx)], (np.r_[np.arange(nx), np.arange(nx)], np.r_[x, lam[ai]])),
                      shape=(nx, be.num_vars))
    be.add_rows(A, np.full(nx, -INF), np.zeros(nx))
    # sum_a x_ia (= 1 for set cover, <= 1 otherwise)
    A = sp.csr_matrix((np.ones(nx), (ii, x)), shape=(n, be.num_vars))
    lo = active.astype(float) if mode == "set_cover" else np.zeros(n)
    be.add_rows(A, lo, np.ones(n))
    if mode == "set_cover":
        assert first is not None and first.objective is not None   # stage 1 found the cover
        n_max = first.objective
    else:
        assert k is not None   # max_coverage: at most k columns
        n_max = k
    be.add_row(lam, np.ones(n_cols), -INF, float(n_max))
    if mode != "set_cover":
        target = first.objective if first is not None and first.objective is not None else float(min_cover)
        be.add_row(x, m[ii], target - 1e-6, INF)
    if first is not None and first.assign is not None and be.capabilities.mip_start:
        start_lam = np.zeros(n_cols)
        start_lam[first.chosen] = 1.0
        start_x = (first.assign[ii] == ai).astype(float)
        be.set_mip_start(np.r_[lam, x], np.r_[start_lam, start_x])
    sol = be.solve()
    if not sol.status.has_solution:
        if first is not None:
            return first
        return IntegerResult(sol.status)
    chosen = np.flatnonzero(np.asarray(sol.x)[lam] > 0.5)
    proven = sol.status == Status.OPTIMAL
    assign, cost = _greedy_assign(C, D, m, chosen)
    covered = float(m[assign >= 0].sum())
    obj = float(len(chosen)) if mode == "set_cover" else covered
    if first is not None and first.objective is not None and mode != "set_cover" and covered < first.objective - 1e-9:
        return first   # numerical safety: never worse than stage 1
    status = first.status if first is not None else sol.status
    bound = first.bound if first is not None else None
    if first is not None and sol.status != Status.OPTIMAL and first.cost < cost:
        return first
    return IntegerResult(status, chosen.tolist(), assign, obj, cost, bound, proven)

