r"""Compact MIP for one-for-many group counterfactuals (paper eqs. 1–14; Carrizosa,
Ramírez-Ayerbe & Romero Morales 2024).

With :math:`K` copies of a counterfactual (an upper bound on the optimum, e.g. the size
of an initial solution):

.. math::

    \min \sum_{k=1}^{K} y^k \quad\text{s.t.}\quad
    & \mathrm{score}(v^k) \ge \tau + \varepsilon,\ v^k \text{ one-hot}
      &&(k \le K;\ \text{eqs. 2–3, 11})\\
    & a_i^k \le y^k,\qquad \textstyle\sum_k a_i^k \ge 1 && (i \in S;\ \text{eqs. 4–5})\\
    & a_i^k \le v^k_{h(i,l)} + f_l^k \ \ (l \text{ one-hot}),\quad
      a_i^k \le v^k_l + f^k_l \ / \ a_i^k \le 1 - v^k_l + f^k_l \ \ (l \text{ binary})
      && (\text{replaces eqs. 6–9})\\
    & \textstyle\sum_l f_l^k \le T_{\max}\, y^k && (\text{eq. 10})\\
    & y^k \ge y^{k+1},\quad a_i^k = 0 \ (k > \pi(i)) && (\text{symmetry})\\
    & y, a, v, f \text{ binary};\ f^k_l = 0 \ (l \text{ immutable}).

The paper links instance and counterfactual column by column, :math:`d_h^k \ge
\xi_{ih}^k a_i^k` with :math:`|T_l| f_l^k \ge \sum_{h \in T_l} d_h^k`; the per-feature
agreement rows used here (one per instance, copy and feature; see
:mod:`groupcf.formulations.blocks`) describe the same integer set with a tighter LP
relaxation and no :math:`d` variables. Increase-only features add
:math:`a_i^k \le \sum_{h \ge h(i,l)} v^k_h`. Every copy must be classified positive even
when unused (any positive point will do; the warm start supplies one). Symmetry: with the
types in an order :math:`\pi`, copies are ordered by the first type they serve, so type
:math:`i` can only be served by copies :math:`k \le \pi(i)` — valid for any solution
after relabelling its copies (assign each type to one copy first). The order starts with
the largest conflict clique (below), whose :math:`q` members need distinct copies: member
:math:`j` is fixed to copy :math:`j` and :math:`y^j = 1` for :math:`j < q`.
Conflicts: types that differ in more than :math:`T_{\max}` features (or in an immutable
one) can never share a copy; for cliques :math:`Q` of such types,
:math:`\sum_{i \in Q} a_i^k \le y^k` (see :func:`conflict_cliques`).
"""
from __future__ import annotations

import numpy as np

from ...formulations.blocks import add_agreement, add_counterfactual
from ...formulations.rows import RowBuffer
from ...solvers import make_backend
from ...solvers.base import INF, Solution, VarType
from .conflicts import conflict_cliques


class CompactMIP:
    """The compact MIP with ``K`` copies over the types of a group problem."""

    def __init__(self, problem, K: int, solver, active: np.ndarray | None = None, time_limit=None,
                 completions=None):
        self.problem, self.K = problem, K
        self.active = np.ones(problem.n_types, dtype=bool) if active is None else active
        be = self.backend = make_backend(solver, time_limit=time_limit)
        space = problem.space
        self.cliques = conflict_cliques(problem, self.active, completions)
        # the types of the largest clique come first in the symmetry order: they need
        # distinct copies, so member j is served by copy j (fixed below)
        lead = max(self.cliques, key=len) if self.cliques else np.zeros(0, dtype=np.int64)
        lead = lead[: K]
        rest = [i for i in range(problem.n_types) if i not in set(lead.tolist())]
        self.pos = np.empty(problem.n_types, dtype=np.int64)
        self.pos[np.concatenate([lead, rest]).astype(np.int64)] = np.arange(problem.n_types)
        y_lb = (np.arange(K) < len(lead)).astype(float)
        self.y = be.add_vars(K, y_lb, 1.0, VarType.BINARY)
        self.blocks, self.a = [], []
        rows = RowBuffer()
        for k in range(K):
            blk = add_counterfactual(be, space, problem.tm.embedding, problem.score_lo,
                                     Tmax=problem.Tmax, y=int(self.y[k]))
            # symmetry: copies sorted by the first type they serve (in the order pos), so
            # type i only uses copies k <= pos[i]; clique member k is served by copy k
            ub = self.active & (self.pos >= k)
            lb = np.zeros(problem.n_types)
            if k < len(lead):
                lb[lead[k]] = 1.0
            a = be.add_vars(problem.n_types, lb, ub.astype(float), VarType.BINARY)
            for i in np.flatnonzero(ub):
                rows.add([a[i], self.y[k]], [1.0, -1.0], -INF, 0.0)                 # a <= y
                add_agreement(rows, space, blk, problem.Z[i], z=int(a[i]))
            self.blocks.append(blk)
            self.a.append(a)
            for Q in self.cliques:                                                   # conflicts
                rows.add(list(a[Q]) + [self.y[k]], [1.0] * len(Q) + [-1.0], -INF, 0.0)
        A = np.array(self.a)                                                         # K x types
        for i in np.flatnonzero(self.active):
            rows.add(A[:, i], 1.0, 1.0, INF)                                         # sum_k a >= 1
        for k in range(K - 1):
            rows.add([self.y[k], self.y[k + 1]], [1.0, -1.0], 0.0, INF)             # y_k >= y_k+1
        rows.flush(be)
        be.set_objective(self.y, np.ones(K), sense="min")

    def warm_start(self, columns) -> None:
        """MIP start from a list of columns (at most ``K``): every type is assigned to the
        first column covering it and the columns are ordered by the first type they serve
        (the symmetry rule); unused copies repeat a counterfactual with ``y = 0``."""
        if not self.backend.capabilities.mip_start or not columns:
            return
        n = self.problem.n_types
        owner = np.full(n, -1)
        for t in np.argsort(self.pos):        # lead clique first: each member its own column
            if self.active[t]:
                owner[t] = next(j for j, col in enumerate(columns) if col.cover[t])
        served = [np.flatnonzero(owner == j) for j in range(len(columns))]
        order = sorted((j for j in range(len(columns)) if len(served[j])), key=lambda j: self.pos[served[j]].min())
        idx, vals = [], []
        for k in range(self.K):
            used = k < len(order)
            col = columns[order[k]] if used else columns[order[0]]
            blk = self.blocks[k]
            F = np.zeros(len(blk.f))
            assign = np.zeros(n)
            if used:
                F[list(col.F)] = 1.0
                assign[served[order[k]]] = 1.0
            i_e, v_e = blk.constr.start_values(col.v)
            idx += [self.y[k:k + 1], blk.v, blk.f, self.a[k], i_e]
            vals += [[float(used)], col.v, F, assign, v_e]
        self.backend.set_mip_start(np.concatenate(idx), np.concatenate(vals))

    def solve(self) -> Solution:
        return self.backend.solve()

    def columns(self, sol: Solution):
        """The used copies as columns."""
        out = []
        for k in range(self.K):
            if sol.values[self.y[k]] > 0.5:
                blk = self.blocks[k]
                out.append(self.problem.make_column(sol.values[blk.v], np.flatnonzero(sol.values[blk.f] > 0.5), "compact"))
        return out
