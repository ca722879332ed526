r"""Bounding the coverage gap between protected groups (``explain_global(..., fair_by=)``).

With groups :math:`g \in G` of sizes :math:`n_g` (people of ``S``, covered or not) and the
types split so that each lies in one group, the integer master at budget :math:`k` becomes

.. math::

    \max \sum_t m_t u_t \quad\text{s.t.}\quad
    u_t \ge \lambda_a \ (c_{ta} = 1), \quad u_t \le \sum_a c_{ta}\lambda_a, \quad
    \sum_a \lambda_a \le k, \\
    \ell \le \frac{1}{n_g}\sum_{t \in g} m_t u_t \le h \ (g \in G), \quad h - \ell \le \gamma,
    \quad \lambda \in \{0,1\}, \ 0 \le u \le 1 .

The two families of rows make :math:`u_t` exactly "some chosen action covers type
:math:`t`" (not only a lower bound on it, as in the unconstrained master, where
maximisation alone makes it exact), so the gap :math:`\gamma` (``max_gap``) is between the
groups' real coverages. Among the selections of the pool meeting the gap it returns one
of most coverage (each person then takes their cheapest covering chosen action). The
curve's certified upper bound stays the unconstrained one: a valid, possibly loose, bound
for the constrained problem; a point is optimal only when it meets that bound.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..exceptions import InvalidInputError
from ..solvers import make_backend
from ..solvers.base import INF, VarType

__all__ = ["Fairness", "fair_max_coverage", "group_coverage"]


@dataclass
class Fairness:
    """The groups of ``S`` for ``fair_by=``: an integer code per row, the labels, the
    number of people per group and the largest coverage gap allowed."""

    name: str
    codes: np.ndarray
    labels: list
    n_per_group: np.ndarray
    max_gap: float

    @classmethod
    def from_input(cls, S: pd.DataFrame, fair_by, max_gap: float) -> Fairness:
        """``fair_by``: a column of ``S`` or a Series indexed like ``S``."""
        if isinstance(fair_by, str):
            if fair_by not in S.columns:
                raise InvalidInputError(f"fair_by={fair_by!r} is not a column of S; columns: {list(S.columns)}")
            g, name = S[fair_by], fair_by
        else:
            g = pd.Series(fair_by)
            name = str(g.name) if g.name is not None else "group"
            missing = S.index.difference(g.index)
            if len(missing):
                raise InvalidInputError(f"fair_by has no group for rows {list(missing[:10])} of S; "
                                        "pass a column name of S or a Series indexed like S")
            g = g.loc[S.index]
        if g.isna().any():
            raise InvalidInputError(f"fair_by ({name}) is missing for rows {list(S.index[g.isna().to_numpy()][:10])}")
        if not (isinstance(max_gap, (int, float)) and 0.0 <= float(max_gap) <= 1.0):
            raise InvalidInputError(f"max_gap must be a share in [0, 1], got {max_gap!r}")
        codes, labels = pd.factorize(g.astype(object), sort=True)
        if len(labels) < 2:
            raise InvalidInputError(f"fair_by ({name}) has a single group {list(labels)}: no gap to bound")
        return cls(name, codes.astype(int), list(labels), np.bincount(codes, minlength=len(labels)).astype(float),
                   float(max_gap))

    def coverage(self, covered_rows: np.ndarray) -> pd.Series:
        """Coverage share per group from a bool per row of ``S``."""
        return group_coverage(covered_rows, self.codes, self.labels)

    def gap(self, covered_rows: np.ndarray) -> float:
        c = self.coverage(covered_rows)
        return float(c.max() - c.min())


def group_coverage(covered_rows, codes, labels) -> pd.Series:
    """Share of each group's people that are covered."""
    covered_rows = np.asarray(covered_rows, dtype=bool)
    n = np.bincount(codes, minlength=len(labels)).astype(float)
    c = np.bincount(codes, weights=covered_rows.astype(float), minlength=len(labels))
    return pd.Series(c / np.maximum(n, 1), index=pd.Index(labels, name="group"), name="coverage")


def fair_max_coverage(C: np.ndarray, m: np.ndarray, active: np.ndarray, k: int, type_group: np.ndarray,
                      fair: Fairness, solver, time_limit: float | None = None):
    """The most coverage by ``≤ k`` pool columns with every group's coverage within
    ``fair.max_gap`` of every other's (module docstring).

    Returns ``(chosen, status, bound)``: column positions, the solver's status and its
    dual bound on the constrained coverage (``None`` when it has none).
    """
    C = np.asarray(C, dtype=bool) & np.asarray(active, dtype=bool)[None, :]
    n_cols, n = C.shape
    G = len(fair.labels)
    be = make_backend(solver, time_limit=time_limit)
    lam = be.add_vars(n_cols, 0.0, 1.0, VarType.BINARY)
    u = be.add_vars(n, 0.0, active.astype(float))
    lo_hi = be.add_vars(2, 0.0, 1.0)
    nv = n_cols + n + 2
    a_idx, t_idx = np.nonzero(C)
    rows = len(a_idx)
    # u_t - lambda_a >= 0 for every (a, t) with c_ta = 1
    A1 = sp.csr_matrix((np.r_[np.ones(rows), -np.ones(rows)],
                        (np.r_[np.arange(rows), np.arange(rows)], np.r_[u[t_idx], lam[a_idx]])), shape=(rows, nv))
    be.add_rows(A1, np.zeros(rows), np.full(rows, INF))
    # sum_a c_ta lambda_a - u_t >= 0
    A2 = sp.hstack([sp.csr_matrix(C.T.astype(float)), -sp.eye(n), sp.csr_matrix((n, 2))], format="csr")
    be.add_rows(A2, np.zeros(n), np.full(n, INF))
    be.add_row(lam, np.ones(n_cols), -INF, float(k))
    # l <= cov_g <= h, h - l <= gap
    W = sp.csr_matrix((m / fair.n_per_group[type_group], (type_group, u)), shape=(G, nv)).tolil()
    lo_rows, hi_rows = W.copy(), W.copy()
    lo_rows[:, lo_hi[0]] = -1.0
    hi_rows[:, lo_hi[1]] = -1.0
    be.add_rows(lo_rows.tocsr(), np.zeros(G), np.full(G, INF))
    be.add_rows(hi_rows.tocsr(), np.full(G, -INF), np.zeros(G))
    be.add_row(lo_hi, [-1.0, 1.0], -INF, fair.max_gap)
    be.set_objective(u, -m, "min")
    sol = be.solve()
    if not sol.status.has_solution:
        return [], sol.status, None
    chosen = np.flatnonzero(np.asarray(sol.x)[lam] > 0.5).tolist()
    bound = -sol.dual_bound if sol.dual_bound is not None and math.isfinite(sol.dual_bound) else None
    return chosen, sol.status, bound
