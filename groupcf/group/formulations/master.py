r"""Integer set covers of the one-for-many algorithms (the integer version of the
master problem, paper eqs. 15–18).

.. math::

    \min \sum_{k \in K'} y_k \quad\text{s.t.}\quad
    \sum_{k \in K' :\, i \in C_k} y_k \ge 1 \quad (i \in S), \qquad y_k \ge 0,

over the columns :math:`K'` generated so far (:math:`C_k`: the instance types column
:math:`k` covers), with :math:`y_k \in \{0,1\}`: it gives the final solution. Its LP
relaxation, whose duals :math:`w_i \ge 0` price new columns, is the generic engine's
:class:`groupcf.colgen.SetCoverMaster` (column generation, :mod:`groupcf.group.colgen`,
and every branch-and-price node, :mod:`groupcf.group.branching`).
"""
from __future__ import annotations

import math

import numpy as np

from ...exceptions import SolverError
from ...formulations.rows import RowBuffer
from ...solvers import make_backend
from ...solvers.base import INF, Solution, Status, VarType
from ...utils import EPS


def solve_set_cover(C: np.ndarray, solver, allowed: np.ndarray | None = None, time_limit: float | None = None,
                    start: np.ndarray | None = None, most: int | None = None, integer: bool = True) -> Solution:
    """Minimum number of columns (rows of the bool matrix ``C``, columns × types) covering
    every type, as a MIP (``integer=False``: its LP relaxation, with the rows' duals).
    Types that no allowed column covers make it infeasible; so does ``most`` (at most that
    many columns) when no cover is that small."""
    be = make_backend(solver, time_limit=time_limit)
    n_cols, n_types = C.shape
    ub = np.ones(n_cols) if allowed is None else allowed.astype(float)
    y = be.add_vars(n_cols, 0.0, ub, VarType.BINARY if integer else VarType.CONTINUOUS, obj=1.0)
    rows = RowBuffer()
    for i in range(n_types):
        rows.add(y[C[:, i]], 1.0, 1.0, INF)
    if most is not None:
        rows.add(y, 1.0, -INF, float(most))
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
        chosen.extend(rows[sol.values[: len(rows)] > 0.5].tolist())
    return lower, (np.array(chosen, dtype=int) if proven else None)

