r"""Restricted master problem of the column generation (paper eqs. 15–18).

.. math::

    \min \sum_{k \in K'} y_k \quad\text{s.t.}\quad
    \sum_{k \in K' :\, i \in C_k} y_k \ge 1 \quad (i \in S), \qquad y_k \ge 0,

over the columns :math:`K'` generated so far (:math:`C_k`: the instance types column
:math:`k` covers). Its LP duals :math:`w_i \ge 0` price new columns; its integer version
(:math:`y_k \in \{0,1\}`) gives the final solution. Columns are added to the live model,
so each LP re-solve can start from the previous basis. The backend must report LP duals
(``Backend.require("lp_duals", ...)`` raises :class:`~groupcf.exceptions.SolverCapabilityError`
otherwise).

Branch-and-price (:mod:`groupcf.group.branching`) builds one restricted master per node
over the columns admissible there.
"""
from __future__ import annotations

import math

import numpy as np

from ...exceptions import SolverError
from ...formulations.rows import RowBuffer
from ...solvers import make_backend
from ...solvers.base import INF, Solution, Status, VarType
from ...utils import EPS


class RestrictedMaster:
    """The LP master over a growing list of columns (each a bool cover over types)."""

    def __init__(self, n_types: int, solver):
        self.solver = solver
        self.n_types = n_types
        self.backend = make_backend(solver)
        self.backend.require("lp_duals", "column generation (the master's duals price columns)")
        self.covers: list[np.ndarray] = []
        self.y = np.zeros(0, dtype=np.int64)
        # one covering row per type; columns come later
        self.rows = self.backend.add_rows(_empty(n_types, 0), np.ones(n_types), np.full(n_types, INF))

    @classmethod
    def from_covers(cls, n_types: int, covers: np.ndarray, costs: np.ndarray, solver) -> RestrictedMaster:
        """A master with the given columns (bool covers, one row each), built at once."""
        import scipy.sparse as sp

        self = cls.__new__(cls)
        self.solver, self.n_types = solver, n_types
        self.backend = make_backend(solver)
        self.backend.require("lp_duals", "branch-and-price (the master's duals price columns)")
        covers = np.asarray(covers, dtype=bool).reshape(-1, n_types)
        self.y = self.backend.add_vars(len(covers), 0.0, INF, obj=np.asarray(costs, dtype=float))
        A = sp.csr_matrix(covers.T.astype(float))
        A = sp.csr_matrix((A.data, self.y[A.indices], A.indptr), shape=(n_types, self.backend.num_vars))
        self.rows = self.backend.add_rows(A, np.ones(n_types), np.full(n_types, INF))
        self.covers = list(covers)
        return self

    @property
    def n_columns(self) -> int:
        return len(self.covers)

    def add(self, cover: np.ndarray, cost: float = 1.0) -> int:
        """Add a column covering the types ``cover``; ``cost`` other than 1 is for
        artificial columns (branch-and-price)."""
        rows = self.rows[np.flatnonzero(cover)]
        idx = self.backend.add_column(float(cost), rows, np.ones(len(rows)), 0.0, INF)
        self.covers.append(np.asarray(cover, dtype=bool))
        self.y = np.append(self.y, idx)
        return len(self.covers) - 1

    def solve_lp(self, time_limit: float | None = None) -> Solution:
        self.backend.options.time_limit = time_limit
        return self.backend.solve()

    def cover_matrix(self) -> np.ndarray:
        return np.array(self.covers, dtype=bool).reshape(len(self.covers), self.n_types)


def solve_set_cover(C: np.ndarray, solver, allowed: np.ndarray | None = None, time_limit: float | None = None,
                    start: np.ndarray | None = None) -> Solution:
    """Minimum number of columns (rows of the bool matrix ``C``, columns × types) covering
    every type, as a MIP. Types that no allowed column covers make it infeasible."""
    be = make_backend(solver, time_limit=time_limit)
    n_cols, n_types = C.shape
    ub = np.ones(n_cols) if allowed is None else allowed.astype(float)
    y = be.add_vars(n_cols, 0.0, ub, VarType.BINARY, obj=1.0)
    rows = RowBuffer()
    for i in range(n_types):
        rows.add(y[C[:, i]], 1.0, 1.0, INF)
    rows.flush(be)
    be.set_objective(y, np.ones(n_cols), sense="min")
    if start is not None and be.capabilities.mip_start:
        be.set_mip_start(y, start.astype(float))
    return be.solve()


def set_cover_by_components(C: np.ndarray, solver, deadline, start: np.ndarray | None = None
                            ) -> tuple[int, np.ndarray | None]:
    """:func:`solve_set_cover` over ``C`` (columns × types, every type coverable), one
    connected component of the types–columns graph at a time (no column reaches two, so
    the optimum and the bound are sums), smallest first. Returns ``(lower bound, chosen
    column indices or None when some component stopped at the deadline)``; ``start``: a
    feasible 0/1 vector over the columns (its restriction is each component's MIP start)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    m = len(C)
    B = sp.csr_matrix(C)
    _, lab = connected_components(sp.bmat([[None, B], [B.T, None]], format="csr"), directed=False)
    col_lab, type_lab = lab[:m], lab[m:]
    lower, chosen, proven = 0, [], True
    for c in sorted(np.unique(type_lab), key=lambda c: (type_lab == c).sum()):
        rows = np.flatnonzero(col_lab == c)
        sol = solve_set_cover(C[np.ix_(rows, np.flatnonzero(type_lab == c))], solver, time_limit=deadline.left(),
                              start=None if start is None else start[rows])
        if sol.status == Status.INFEASIBLE:
            raise SolverError("internal error: a set cover whose columns do not cover every type")
        bound = sol.dual_bound if sol.dual_bound is not None and np.isfinite(sol.dual_bound) else None
        if bound is None and sol.status == Status.OPTIMAL:
            bound = sol.objective              # a backend without a reported dual bound
        lower += max(1, 0 if bound is None else math.ceil(bound - EPS))
        if sol.status != Status.OPTIMAL:
            proven = False
            continue
        chosen.extend(rows[sol.x[: len(rows)] > 0.5].tolist())
    return lower, (np.array(chosen, dtype=int) if proven else None)


def _empty(m: int, n: int):
    import scipy.sparse as sp

    return sp.csr_matrix((m, n))
