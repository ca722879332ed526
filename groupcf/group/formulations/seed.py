r"""Exact pricing by *seed* types, for any embedded model (paper §4.2, reformulated).

Every column of positive dual value covers some type :math:`s` with :math:`w_s > 0`, its
*seed*. With the seed fixed, the counterfactual equals :math:`x_s` outside the change set
:math:`F`, so a type :math:`k` is covered iff the features where it differs from the
seed, :math:`D_{sk}`, all lie in :math:`F` (plus, for increase-only features, the point
is not below :math:`x_k`). The coverage rows no longer involve the point at all:

.. math::

    \max \sum_{k \in J_s} w_k z_k \quad\text{s.t.}\quad
    & z_k \le f_l \ (l \in D_{sk}), \qquad \textstyle\sum_l f_l \le T_{\max},
      \qquad f_l = 0 \ (l \text{ immutable}), \\
    & v_{h(s,l)} \ge 1 - f_l \ \text{(agreement with the seed)}, \qquad
      \mathrm{score}(v) \ge \tau + \varepsilon, \\
    & z_k \le \textstyle\sum_{h \ge h(k,l)} v_h \ (l \text{ increase-only}),\qquad
      z_j + z_k \le 1 \ (|D_{sj} \cup D_{sk}| > T_{\max}),\quad z, f, v \text{ binary},

over the compatible types :math:`J_s = \{k : w_k > 0,\ |D_{sk}| \le T_{\max},\ D_{sk}`
free of immutable features :math:`\}`. These rows are exact (no big-M on coverage), so
the MIP is far tighter than the joint pricing MIP (paper eqs. 23–28), and the model of a
seed is built once and re-solved with new duals. The pairwise conflict rows are implied
for integral :math:`f` but not by the LP; with binary :math:`z` the solver turns them into
clique cuts (measured on Students, |S| = 100, Tmax = 15: 5.6× faster seed MIPs).

**Solving a seed.** The coverage part alone is a combinatorial problem — the heaviest
set of types whose difference sets fit together in :math:`T_{\max}` features — solved
by depth-first branch-and-bound (:func:`~groupcf.group.formulations.subsets.max_weight_union`,
falling back to the MIP above if it exceeds its node limit). The score row is handled
by ``mode``, chosen automatically:

* ``"linear"`` — an **additive model** (:meth:`~groupcf.embeddings.base.Embedding.additive`: logistic
  regression, linear classifiers) **without increase-only features**: a union :math:`U`
  of difference sets is feasible iff :math:`s_s + \sum_{l \in U} G_{sl}` plus the
  :math:`T_{\max} - |U|` largest further gains reaches :math:`\tau + \varepsilon`
  (:math:`G_{sl} \ge 0`: the gain of giving feature :math:`l` its best category). The
  test is monotone, so the search prunes every infeasible union; the seed's optimum is
  exact without any MIP, and the point is the closed-form completion.
* ``"lazy"`` — any other model without increase-only features: the search ignores the
  score; the best union :math:`D` it finds is checked by
  :meth:`~groupcf.formulations.completion.Completions.check` (greedy numpy search,
  then a small feasibility MIP) with the budget :math:`k = T_{\max} - |D|` of further
  features. A feasible answer is the seed's optimum (the relaxation's value is
  attained); an infeasible one is a *no-good*: no union containing :math:`D` is feasible
  (in the MIP: :math:`\sum_{l \notin D} f_l \ge k + 1`), and the search runs again.
  No-goods do not depend on the duals, so they are kept for the whole run
  (branch-and-price included).
* ``"embedded"`` — with increase-only features the network is embedded in the seed MIP
  as written above.

**Screening** (mode ``"embedded"``): the combinatorial search above, without the score
and increase-only rows, is a relaxation of the seed's MIP; when it proves that no union
of weight above 1 fits in :math:`T_{\max}` features, the MIP is skipped. When every
completion question can be answered without a MIP (closed form, or enumeration of a
discrete space: :mod:`~groupcf.group.formulations.exact_check`) the search also prunes
every set of types no completion can cover (a monotone test), so its optimum is the
seed's exact value and its point the column; a question that would need a MIP leaves
the seed to its MIP.
The MIP itself carries the cutoff row :math:`\sum_k w_k z_k \ge 1 + \varepsilon` (only
improving columns are wanted): infeasible means the seed's optimum is at most
:math:`1 + \varepsilon`, a bound the solver proves without closing the gap to a smaller optimum.

**Seeds in order.** Seeds are taken in decreasing order of the trivial bound
:math:`\sum_{k \in J_s} w_k`; a seed already solved is excluded from later seeds'
:math:`J` (every column containing it was considered there), and a seed whose bound
cannot beat 1 is skipped. When every seed is solved, the largest seed optimum is the
exact pricing value. A round stopped early (enough columns, the time limit) still gives a
valid bound for Farley's bound: the largest seed dual bound, or trivial bound for the seeds
not solved (computed with the seeds done so far excluded).

**Branching rows** (Ryan–Foster, :mod:`groupcf.group.branching`): a decision
"same(i, j)" adds :math:`z_i = z_j` and "differ(i, j)" adds :math:`z_i + z_j \le 1`
(with :math:`z_s = 1`: fixings). The column returned in a node
covers exactly the chosen :math:`z` (an admissible subset of the point's coverage).
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ...formulations.blocks import add_agreement, add_counterfactual, increase_only_rows
from ...formulations.completion import Completions
from ...formulations.rows import RowBuffer
from ...solvers import make_backend
from ...solvers.base import INF, Solution, Status, VarType
from ...utils import EPS
from . import subsets
from .coverage import add_inclusion_coverage
from .exact_check import check_union, extend_by_gain, items_test, linear_union_test, lower_codes
from .pricing import PricingResult
from .subsets import decisions

log = logging.getLogger(__name__)


class SeedPricing:
    """Exact pricing, one small problem per seed type (see the module docstring).

    ``mode`` is ``"linear"``, ``"lazy"`` or ``"embedded"`` (module doc; default: the
    first that applies). ``mip_gap`` is the relative gap of every seed MIP (its dual
    bound is what the proofs use, so any gap is safe).
    """

    #: most no-good cuts per seed and pricing call before giving up the proof
    MAX_ROUNDS = 500

    def __init__(self, problem, solver, mip_gap: float = 1e-6, mode: str | None = None,
                 node_limit: int = 200_000, completions: Completions | None = None):
        self.problem, self.solver, self.mip_gap = problem, solver, mip_gap
        self.completions = problem.completions(solver) if completions is None else completions
        space = problem.space
        self.mutable = np.array([not f.immutable for f in space])
        self.inc = np.array([f.increase_only and not f.immutable for f in space])
        self.D = np.abs(problem.codes[:, None, :] - problem.codes[None, :, :]) > 1e-9
        self.compat = (self.D.sum(axis=2) <= problem.Tmax) & ~self.D[:, :, ~self.mutable].any(axis=2)
        allowed = ["embedded"]
        if not self.inc.any() and len(space) <= 62:
            allowed = (["linear"] if self.completions.additive else []) + ["lazy", "embedded"]
        if mode is None:
            mode = allowed[0]
        if mode not in allowed:
            raise ValueError(f"seed pricing mode {mode!r} does not apply here; possible: {allowed}")
        self.mode = mode
        self.linear = mode == "linear"
        if self.linear:
            #: scores of the types and G[i, l]: the gain of freeing feature l of type i
            self.s: np.ndarray
            self.G: np.ndarray
            self.s, self.G = self.completions.gains(problem.Z)
        #: completions in numpy first, a feasibility MIP otherwise (no increase-only features)
        self.checker = self.completions if not self.inc.any() else None
        self._nogoods: dict[int, list] = {}      # seed -> unions proven infeasible (bitmasks)
        self._models: dict[int, tuple] = {}      # seed -> (branching key, backend, f, z, v)
        self.calls = 0
        self.seed_solves = 0
        self.cuts = 0
        self._dmask = subsets.masks_of(self.D) if len(space) <= 62 else None
        self._dfs_failed: dict[int, bool] = {}   # seeds whose search hit the node limit
        self._cutoff: dict[int, tuple] = {}      # seed -> (backend, its cutoff row)
        self._refuted: dict[int, dict] = {}      # seed -> memo of exact_check.items_test
        self.node_limit = node_limit

    def completion(self, i: int, F) -> np.ndarray:
        """The seed's best completion on ``F`` (closed form, additive model)."""
        return self.completions.completion(self.problem.Z[i], F)

    # ------------------------------------------------------------------ pricing
    def solve(self, w: np.ndarray, max_columns: int = 10, branching=(), deadline=None,
              eps: float = EPS) -> PricingResult:
        """Columns of dual value above 1, best first, with a bound on the best value.

        Stops after ``max_columns`` improving columns (no proof this round). The bound is
        always finite and valid: the largest of the solved seeds' dual bounds and of the
        trivial bounds :math:`\\sum_{k \\in J_t} w_k` of the seeds not solved (a column's
        first seed in the order either was solved, with every covered type still in its
        :math:`J`, or was not, and then none of its types is done yet).
        ``branching`` is a sequence of ``(i, j, same)`` decisions.
        """
        t0 = time.perf_counter()
        self.calls += 1
        p = self.problem
        n = p.n_types
        same, differ = decisions(n, branching)
        positive = w > 0
        order = np.argsort(-((self.compat & positive[None, :]) @ w), kind="stable")
        done = np.zeros(n, dtype=bool)
        found: dict[bytes, tuple[float, object]] = {}
        bound, complete = 0.0, True
        stopped = None                     # position in ``order`` where the round stopped
        for pos, s in enumerate(order):
            if not positive[s]:
                continue
            group = np.flatnonzero(same == same[s])        # must be covered with s
            # without branching only positive weights matter; with it a zero-weight type
            # may have to come along with its "same" partners
            J = self.compat[s] & ~done & (positive | bool(branching))
            J[group] = True
            if done[group].any() or not self.compat[s, group].all():
                done[s] = True
                continue                                  # considered already / impossible
            ub = float(w[J].sum())
            if ub <= 1 + eps:
                done[s] = True
                continue
            if len(found) >= max_columns or (deadline is not None and deadline.passed):
                complete, stopped = False, pos
                break
            val, dual, col = self._seed(s, w, J, group, same, differ, branching)
            self.seed_solves += 1
            done[s] = True
            if dual is None:            # not solved: its trivial bound stands in
                complete = False
                dual = ub
            bound = max(bound, dual)
            if col is not None and val > 1 + eps:
                found.setdefault(col.key, (val, col))
        cols = [c for _, c in sorted(found.values(), key=lambda t: -t[0])]
        best = max((v for v, _ in found.values()), default=0.0)
        if stopped is not None:         # seeds not reached: their trivial bounds
            rest = order[stopped:]
            rest = rest[positive[rest]]
            if len(rest):
                bound = max(bound, float(((self.compat[rest] & ~done[None, :] & positive[None, :]) @ w).max()))
        return PricingResult(cols, max(bound, best), complete, time.perf_counter() - t0,
                             Solution(status=Status.OPTIMAL, objective=best))

    def _seed(self, s, w, J, group, same, differ, branching, eps: float = EPS):
        """``(value, dual bound, column)`` for seed ``s``; ``dual`` is ``None`` when the
        MIP stopped without a proof."""
        p = self.problem
        if not self._dfs_failed.get(s) and self._dmask is not None:
            # "embedded": the search without score and increase-only rows is a relaxation;
            # when nothing beats 1 there, the seed's MIP is not needed (module doc)
            res = self._seed_dfs(s, w, J, group, same, differ, eps, screen=self.mode == "embedded")
            if res[1] is not None:
                return res
            if self.mode != "embedded":
                self._dfs_failed[s] = True     # no answer: this seed uses the MIP from now on
        be, f, z, v = self._model(s, branching, same, differ)
        zub = J.astype(float)
        zlb = np.zeros(p.n_types)
        zlb[group] = 1.0
        be.set_bounds(z, zlb, zub)
        be.set_objective(z, np.where(J, w, 0.0), sense="max")
        if self.mode == "lazy":
            return self._lazy(s, w, be, f, z, branching, eps)
        # cutoff row: only improving columns (the previous call's row is freed)
        old = self._cutoff.get(s)
        if old is not None and old[0] is be:
            be.set_row_bounds([old[1]], -INF, INF)
        self._cutoff[s] = (be, be.add_row(z, np.where(J, w, 0.0), 1 + eps, INF))
        sol = be.solve()
        if sol.status == Status.INFEASIBLE:
            return 0.0, 1 + eps, None      # nothing above 1 + eps for this seed
        if not sol.status.has_solution:
            return 0.0, None, None
        dual = sol.dual_bound if sol.dual_bound is not None else sol.objective
        if sol.status != Status.OPTIMAL and sol.dual_bound is None:
            return 0.0, None, None
        F = np.flatnonzero(sol.x[f] > 0.5)
        point = self.completion(s, F) if self.linear else sol.x[v]
        col = p.make_column(point, F, "seed")
        if not p.is_positive(col.v):
            log.debug("seed %d: the MIP's point is not accepted by the model; skipped", s)
            return 0.0, float(max(dual, sol.objective)), None
        if branching:
            chosen = sol.x[z] > 0.5
            chosen &= col.cover       # the chosen types (an admissible subset)
            col.cover = chosen
        return float(col.cover @ w), float(max(dual, sol.objective)), col

    def _seed_dfs(self, s, w, J, group, same, differ, eps, screen: bool = False):
        """Modes "linear" and "lazy": the relaxation over the covered types solved by
        :func:`~groupcf.group.formulations.subsets.max_weight_union` (module doc). With
        ``screen`` (mode "embedded") its best union is checked exactly
        (:mod:`~groupcf.group.formulations.exact_check`): a column, a no-good, or a
        ``None`` bound (unknown or conflicting lower codes: the MIP decides).

        Branching decisions: a "same" group is one *unit* (covered iff all its members
        are, weight = their sum), the seed's unit must be covered, and "differ" pairs are
        conflicts. ``None`` as the dual bound means the search hit its node limit.
        """
        p = self.problem
        J = J.copy()
        J[group] = True
        for i, j in differ:            # types that may not be covered with the seed
            if same[i] == same[s]:
                J[same == same[j]] = False
            elif same[j] == same[s]:
                J[same == same[i]] = False
        whole = np.bincount(same, weights=J.astype(float), minlength=len(same)) == np.bincount(same, minlength=len(same))
        J &= whole[same]               # a "same" group enters whole or not at all
        ks = np.flatnonzero(J)
        labels, unit = np.unique(same[ks], return_inverse=True)
        U_mask = np.zeros(len(labels), dtype=np.int64)
        assert self._dmask is not None   # the caller checks: the search runs on bit masks only
        np.bitwise_or.at(U_mask, unit, self._dmask[s, ks])
        U_w = np.bincount(unit, weights=w[ks], minlength=len(labels))
        pos = {int(lab): u for u, lab in enumerate(labels)}
        edges = [(pos[same[i]], pos[same[j]]) for i, j in differ if same[i] in pos and same[j] in pos]
        seed_unit = pos[int(same[s])]
        feasible = linear_union_test(np.where(self.mutable, self.G[s], 0.0), p.score_lo - self.s[s],
                                     p.Tmax) if self.linear else None
        items = items_test(self.completions, p, s, ks, unit, self.inc, self.mutable,
                           self._refuted.setdefault(s, {})) if screen else None
        floor = 1 + eps
        for _ in range(self.MAX_ROUNDS):
            val, chosen, complete = subsets.max_weight_union(
                U_mask, U_w, p.Tmax, floor, must=seed_unit, conflicts=edges, forbidden=self._nogoods.get(s, ()),
                feasible=feasible, feasible_items=items, node_limit=self.node_limit)
            if not complete:
                self._dfs_failed[s] = True     # node limit: this seed uses the MIP from now on
                return 0.0, None, None
            if chosen is None:
                return val, floor, None        # nothing above 1 for this seed
            union = int(np.bitwise_or.reduce(U_mask[chosen]))
            core = subsets.bits(union)
            if screen:                 # increase-only features: exact checks (else the MIP)
                ok, v, F = check_union(self.completions, p, s, core,
                                       lower_codes(p, self.inc, ks[np.isin(unit, chosen)]), self.mutable)
                if ok is not True:     # unknown: a MIP would be needed
                    return 0.0, None, None
                col = p.make_column(v, F, "seed")
            elif self.linear:
                F = extend_by_gain(np.where(self.mutable, self.G[s], -np.inf), core, p.Tmax)
                col = p.make_column(self.completion(s, F), F, "seed")
            else:
                assert self.checker is not None   # mode "lazy": no increase-only feature (__init__)
                ok, v, changed = self.checker.check(p.Z[s], core, p.Tmax - len(core))
                if ok is None:
                    return 0.0, None, None
                if not ok:             # no completion within Tmax - |core| more features
                    self._add_nogood(s, core)
                    continue
                col = p.make_column(v, frozenset(core) | changed, "seed")
            if not p.is_positive(col.v):
                return 0.0, None, None
            if len(labels) < len(ks) or differ:        # branching: the admissible subset
                members = np.zeros(p.n_types, dtype=bool)
                members[ks[np.isin(unit, chosen)]] = True
                col.cover = col.cover & members
            return float(col.cover @ w), val, col
        log.warning("seed %d: no proof after %d no-good cuts", s, self.MAX_ROUNDS)
        return 0.0, None, None

    def _add_nogood(self, s: int, core) -> tuple[np.ndarray, float]:
        """Record that no completion of seed ``s`` changes only ``core`` plus
        ``Tmax - |core|`` further features; returns its MIP row (:meth:`_nogood_row`)."""
        mask = np.int64(sum(1 << int(l) for l in core))
        self._nogoods.setdefault(s, []).append(mask)
        self.cuts += 1
        return self._nogood_row(mask)

    def _nogood_row(self, mask) -> tuple[np.ndarray, float]:
        """``Σ_{l ∉ D} f_l ≥ Tmax − |D| + 1`` for the union ``D`` (bitmask)."""
        inside = subsets.bits(int(mask))
        outside = np.ones(len(self.problem.space))
        outside[inside] = 0.0
        return outside, float(self.problem.Tmax - len(inside) + 1)

    def _lazy(self, s, w, be, f, z, branching, eps):
        """The relaxation over ``(f, z)`` with no-good cuts (module doc, mode "lazy")."""
        p = self.problem
        T = p.Tmax
        for _ in range(self.MAX_ROUNDS):
            sol = be.solve()
            if sol.status == Status.INFEASIBLE:
                return 0.0, 0.0, None
            if not sol.status.has_solution or (sol.status != Status.OPTIMAL and sol.dual_bound is None):
                return 0.0, None, None
            ub = float(max(sol.objective, sol.dual_bound if sol.dual_bound is not None else sol.objective))
            if ub <= 1 + eps:
                return float(sol.objective), ub, None    # this seed cannot price out
            chosen = sol.x[z] > 0.5
            core = np.flatnonzero(self.D[s, chosen].any(axis=0))
            ok, v, changed = self.checker.check(p.Z[s], core, T - len(core))
            if ok is None:
                return 0.0, None, None
            if ok:
                col = p.make_column(v, frozenset(core.tolist()) | changed, "seed")
                if not p.is_positive(col.v):
                    return 0.0, None, None
                if branching:
                    col.cover = chosen & col.cover
                return float(col.cover @ w), ub, col
            # no completion within T - |core| further features: no-good cut
            coefs, lo = self._add_nogood(s, core)
            be.add_row(f, coefs, lo, INF)
        log.warning("seed %d: no proof after %d no-good cuts", s, self.MAX_ROUNDS)
        return 0.0, None, None

    def _model(self, s, branching, same, differ):
        key = tuple(branching)
        hit = self._models.get(s)
        if hit is not None and hit[0] == key:
            return hit[1:]
        p = self.problem
        space = p.space
        be = make_backend(self.solver, mip_gap=self.mip_gap)
        if self.mode in ("linear", "lazy"):
            f = be.add_vars(len(space), 0.0, self.mutable.astype(float), VarType.BINARY)
            v = None
        else:
            blk = add_counterfactual(be, space, p.tm.embedding, p.score_lo, Tmax=p.Tmax)
            f, v = blk.f, blk.v
        z = be.add_vars(p.n_types, 0.0, self.compat[s].astype(float), VarType.BINARY)
        rows = RowBuffer()
        ks = np.flatnonzero(self.compat[s])
        add_inclusion_coverage(be, self.D[s, ks], p.Tmax, f=f, types=z[ks], rows=rows)
        if self.mode in ("linear", "lazy"):
            rows.add(f, 1.0, -INF, float(p.Tmax))
            need = p.score_lo - self.s[s] if self.linear else 0.0
            if need > 0:
                rows.add(f, self.G[s], need, INF)                      # knapsack score row
            for mask in self._nogoods.get(s, ()):
                rows.add(f, *self._nogood_row(mask), INF)              # no-good cuts
        else:
            add_agreement(rows, space, blk, p.Z[s])                    # v = x_s outside F
            for k in np.flatnonzero(self.compat[s]):
                for l in np.flatnonzero(self.D[s, k] & self.inc):      # never decrease for k
                    feat = space.features_[l]
                    increase_only_rows(rows, feat, v[feat.columns], p.Z[k, feat.columns], int(z[k]))
        for i, j, is_same in branching:
            if is_same:
                rows.add([z[i], z[j]], [1.0, -1.0], 0.0, 0.0)
            else:
                rows.add([z[i], z[j]], [1.0, 1.0], -INF, 1.0)
        rows.flush(be)
        self._models[s] = (key, be, f, z, v)
        return be, f, z, v

