r"""The pricing MIP over actions: one model copy per person *with a positive dual*.

Action variables (shared): :math:`b_l \in \{0,1\}` (feature :math:`l` in the action),
for a one-hot feature :math:`s_{lh} \in \{0,1\}` with :math:`\sum_h s_{lh} = b_l` (the
category set), for a binary feature :math:`s_l \le b_l` (the value set), for a continuous
feature a shift :math:`\delta_l \in [-b_l, b_l]` (:math:`\ge 0` when increase-only;
:math:`\delta_l = n_l/(\mathrm{high}_l - \mathrm{low}_l)`, :math:`n_l \in \mathbb Z`, for an
integer feature) or, with ``numeric="set"``, a value :math:`v_l \in [0, 1]`;
:math:`\sum_l b_l \le T_{\max}`.

Per priced type :math:`t` (people with dual :math:`\pi_t > 0`; the others add nothing to a
column's value): :math:`z_t \in \{0,1\}` (covered) and its own inputs :math:`y_t` on the
mutable columns only — the rest is folded into the embedding
(``embedding.partial``):

.. math::

    y_{th} + x_{th} b_l - s_{lh} = x_{th} \ \text{(one-hot, binary)}, \qquad
    |y_{tl} - x_{tl} - \delta_l| \le M_{tl}(1 - z_t) \ \text{(shift)},

(with ``"set"``: :math:`|y_{tl} - v_l| \le M'_{tl}(2 - b_l - z_t)`, :math:`|y_{tl} - x_{tl}|
\le M'_{tl}(b_l + 1 - z_t)`). A continuous :math:`y_{tl}` lives in the type's own box
:math:`[\min(0, x_{tl}), \max(1, x_{tl})]` (a person's value outside the data's range is
kept while the action leaves that feature alone, as :meth:`ActionSpace.apply
<groupcf.global_actions.actions.ActionSpace.apply>` does) and a changed one inside the
domain, :math:`x_{tl} + (0 - x_{tl}) b_l \le y_{tl} \le x_{tl} + (1 - x_{tl}) b_l` (rows
only for the types outside it; never clipped: a shift leaving the domain uncovers
:math:`t`); :math:`M_{tl} = \max(3, w_{tl} + 1)`, :math:`M'_{tl} = \max(1, w_{tl})` with
:math:`w_{tl}` the width of that box. Increase-only rules :math:`\sum_{h < c_t} s_{lh} +
z_t \le 1`, :math:`b_l - s_l + z_t \le 1` (binary, :math:`x_{tl} = 1`), :math:`x_{tl} z_t
\le v_l` (set), and the model: :math:`\mathrm{score}_t(y_t) \ge L_t + (\tau_\pm - L_t) z_t`
with :math:`L_t` a valid lower bound of the score over the type's box
(``score_bounds``); a type whose upper bound is below :math:`\tau_\pm` is dropped.

**The target** :math:`\tau_\pm` (:meth:`ActionMIP.target`). Coverage is counted at the
threshold :math:`\tau` with the numpy model; a MIP solution satisfies the score row only up
to the solver's feasibility tolerance, and the margin :math:`\varepsilon` (``margin``,
above those tolerances) covers it in both directions:

* MIPs that *construct* actions — :meth:`ActionMIP.cheapest` (nearest actions, polishing)
  and the columns of :meth:`ActionMIP.best` — ask :math:`\tau_+ = \tau + \varepsilon`, so
  every action they return really scores :math:`\ge \tau` on the types they cover;
* MIPs whose optimum or dual bound is used as a *bound* — :meth:`ActionMIP.best` with
  ``relaxed`` (the exact pricing level, the best single action) and the relaxed
  :meth:`ActionMIP.cheapest` of one type (the proof that no action covers it) — ask
  :math:`\tau_- = \tau - \varepsilon`. Every action that covers a type at :math:`\tau`
  (numpy score :math:`\ge \tau`) satisfies its row with slack :math:`\varepsilon` and
  the rest of the MIP (each type's box holds its own values), so the relaxed MIP's
  feasible set contains every real cover (as far as the embedding is exact: up to float
  rounding, and for a tree ensemble except the slivers narrower than
  :data:`~groupcf.embeddings.trees.MERGE_TOL` of a column's range between merged split
  thresholds, which its MIP leaves out). So its dual bound is :math:`\ge \max_a \sum_t
  \pi_t c_{ta}` and its infeasibility proves :math:`c_{ta} = 0` for every :math:`a`. Its solutions may lie in
  the band :math:`[\tau - \varepsilon, \tau)`: their real covers decide whether they enter
  (:mod:`~groupcf.global_actions.search`).

* :meth:`ActionMIP.best` maximises :math:`\sum_t \pi_t z_t`: exact pricing for both
  masters (its relaxed dual bound is the :math:`\beta` of :mod:`groupcf.colgen.masters`).
* :meth:`ActionMIP.cheapest` fixes :math:`z_t = 1` for given types and minimises their
  total cost :math:`\sum_t m_t d_{ta}`, linear in :math:`y_t` and generated from each
  feature's :class:`~groupcf.global_actions.actions.CostTerm` :math:`P_{th} = m_t w_l
  \delta_l(c_t \to h)`: :math:`\sum_h P_{th} y_{th}` one-hot, :math:`P_{t0} + (P_{t1} -
  P_{t0}) y_{tl}` binary, :math:`m_t w_l|y_{tl} - x_{tl}|` continuous (the lazy form,
  :meth:`ActionMIP._total_cost`, is linear in the action variables and uses the same
  terms): each person's nearest action (seeds, coverability) and the polishing of chosen
  actions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..colgen import Priced, PricingLevel
from ..features.domain import InputDomain
from ..formulations.rows import RowBuffer
from ..solvers import make_backend
from ..solvers.base import INF, Status, VarType
from ..utils import EPS, Deadline
from .actions import Action, ActionSpace
from .mip_parts import CostBuilder, RowTemplates, unique_actions

BIG_SHIFT = 3.0   # |y - x - δ| <= 3 when uncovered (y, x in [0,1], δ in [-1,1]); wider for a wider box
#: :meth:`ActionMIP.cheapest` over more types than this generates its coverage rows lazily
LAZY_FROM = 8
#: the relative gap within which a start's cost counts as optimal (the backends' default MIP gap)
START_GAP = 1e-4


class OutOfTime(Exception):
    """The deadline passed while a MIP was being built (:meth:`ActionMIP._build`)."""


def _check(deadline: Deadline | None, t: int) -> int:
    """``t``, unless ``deadline`` has passed (then :class:`OutOfTime`)."""
    if deadline is not None and deadline.passed:
        raise OutOfTime
    return t


@dataclass
class PricingResult:
    """What one pricing call found: its status, the improving actions (best first) and a dual bound."""

    status: Status
    actions: list[Action] = field(default_factory=list)   # best first
    objective: float | None = None                        # in the problem's own sense
    bound: float | None = None                            # max: upper bound; min: lower bound
    time: float = 0.0

    @property
    def optimal(self) -> bool:
        return self.status == Status.OPTIMAL


class ActionMIP:
    """Builds and solves the pricing MIP (module docstring) on ``solver``."""

    def __init__(self, aspace: ActionSpace, solver="highs"):
        self.a, self.solver = aspace, solver
        space = aspace.space
        dom = space.domain()
        self.free = np.sort(np.concatenate([aspace.feats[l].columns for l in aspace.mutable])
                            if aspace.mutable else np.zeros(0, dtype=np.int64)).astype(np.int64)
        self.fixed = np.setdiff1d(np.arange(space.n_features_out_), self.free)
        pos = {int(c): j for j, c in enumerate(self.free)}
        self.pos = pos
        self.domain = InputDomain(dom.lb[self.free], dom.ub[self.free], dom.integer[self.free],
                                  tuple(np.array([pos[int(c)] for c in g]) for g in dom.onehot
                                        if int(g[0]) in pos),
                                  {pos[c]: v for c, v in dom.grids.items() if c in pos})
        self._partial: dict[int, tuple] = {}
        self._cheapest_seen: dict[tuple, PricingResult] = {}
        self.calls = 0

    # ------------------------------------------------------------------ per type
    def _embedding(self, t: int):
        """``(embedding, score lower bound, score upper bound, input domain)`` of type ``t``:
        the embedding with the immutable columns folded, over the free columns' domain
        widened to ``t``'s own values (a value outside the data's range is kept as long as
        the action does not change that feature)."""
        hit = self._partial.get(t)
        if hit is None:
            emb = self.a.embedding
            if len(self.fixed):
                emb = emb.partial(self.fixed, self.a.Z[t, self.fixed])
            dom, x = self.domain, self.a.Z[t, self.free]
            if (x < dom.lb).any() or (x > dom.ub).any():
                dom = InputDomain(np.minimum(dom.lb, x), np.maximum(dom.ub, x), dom.integer, dom.onehot, dom.grids)
            lo, hi = emb.score_bounds(dom.lb, dom.ub)
            hit = (emb, float(lo), float(hi), dom)
            self._partial[t] = hit
        return hit

    def target(self, relaxed: bool = False) -> float:
        r"""The score a covered type must reach in the MIP: :math:`\tau + \varepsilon`
        (constructing actions), :math:`\tau - \varepsilon` when ``relaxed`` (bounds and
        proofs; module docstring)."""
        return self.a.tau - self.a.margin if relaxed else self.a.tau + self.a.margin

    def can_cover(self, t: int, relaxed: bool = False) -> bool:
        """False when the score cannot reach :meth:`target` whatever the action (with
        ``relaxed``: a proof that no action covers ``t``)."""
        return self._embedding(t)[2] >= self.target(relaxed)

    # ------------------------------------------------------------------ model
    def _build(self, types, forced: bool, time_limit, costs: bool = True, relaxed: bool = False,
               start: Action | None = None, deadline: Deadline | None = None):
        r"""The MIP over ``types`` (module docstring) with the score target
        :meth:`target`; the per-type rows are added in bulk, one row template across all
        types at a time. Returns ``(backend, action variables, {type: z}, cost)``, the
        cost ``(variables, coefficients, constant)`` of :math:`\sum_t m_t d_{ta}` through
        the types' inputs (empty unless ``forced`` and ``costs``), the backend ``None``
        when a forced type can never be covered. ``start``: an action offered as a
        (partial) MIP start, its action variables only (when the backend takes one).
        ``deadline``: checked before each type's embedding; :class:`OutOfTime` when it
        has passed (building a MIP over many people × a network takes seconds)."""
        a = self.a
        be = make_backend(self.solver, time_limit=time_limit)
        V = self._action_vars(be)
        if start is not None and be.capabilities.mip_start:
            be.set_mip_start(*self._start_values(V, start))
        target = self.target(relaxed)
        emb = {t: self._embedding(_check(deadline, t)) for t in types}
        ok = [t for t in types if emb[t][2] >= target]
        cost = CostBuilder()
        if forced and len(ok) < len(types):
            return None, V, {}, cost
        T = len(ok)
        if T == 0:
            return be, V, {}, cost
        tt = np.array(ok)
        zs = be.add_vars(T, 1.0 if forced else 0.0, 1.0, VarType.BINARY)
        LB, UB = np.array([emb[t][3].lb for t in ok]), np.array([emb[t][3].ub for t in ok])
        Y = be.add_vars(T * len(self.free), LB.ravel(), UB.ravel()).reshape(T, len(self.free))
        X = a.Z[tt]
        one = np.ones(T)
        rows = RowTemplates(T)
        costs = costs and forced
        mt = a.m[tt]
        for l in a.mutable:
            f, d = a.feats[l], V[l]
            codes = a.codes[tt, l].astype(int) if f.encoding != "continuous" else None
            if f.encoding in ("onehot", "binary"):
                assert codes is not None      # an encoded feature has codes
                P = a.terms[l].by_category(codes) * mt[:, None]      # m_t × the term of each category
                if costs and f.encoding == "binary":                  # y = [category 1]: P_0 + (P_1 - P_0) y
                    cost.offset += float(P[:, 0].sum())
                for h, c in enumerate(f.columns):
                    yj, xj = Y[:, self.pos[int(c)]], X[:, c]
                    rows.add([yj, d["b"], d["s"][h]], [one, xj, -one], xj, xj)          # y = x(1 - b) + s
                    if f.increase_only and f.encoding == "onehot":
                        below = codes > h                                             # s_h + z <= 1
                        rows.add([d["s"][h], zs], [one, one], -INF, one, mask=below)
                    if costs:                                         # one-hot: Σ_h P_h y_h
                        cost.add(yj, P[:, h] if f.encoding == "onehot" else P[:, 1] - P[:, 0])
                if f.increase_only and f.encoding == "binary":
                    rows.add([d["b"], d["s"][0], zs], [one, -one, one], -INF, one, mask=X[:, f.columns[0]] >= 0.5)
                continue
            p = self.pos[int(f.columns[0])]
            yv, x0, sc = Y[:, p], X[:, f.columns[0]], d["scale"]
            lc, uc = self.domain.lb[p], self.domain.ub[p]
            span = UB[:, p] - LB[:, p]                       # > 1 for a type outside the data's range
            # a changed value lies inside the domain: y <= x + (u - x) b, y >= x + (l - x) b
            rows.add([yv, d["b"]], [one, x0 - uc], -INF, x0, mask=x0 > uc)
            rows.add([yv, d["b"]], [one, x0 - lc], x0, INF, mask=x0 < lc)
            if a.numeric == "shift":
                M = np.maximum(BIG_SHIFT, span + 1.0)
                rows.add([yv, d["d"], zs], [one, -sc * one, M], -INF, x0 + M)
                rows.add([yv, d["d"], zs], [one, -sc * one, -M], x0 - M, INF)
            else:
                M = np.maximum(1.0, span)
                rows.add([yv, d["d"], d["b"], zs], [one, -sc * one, M, M], -INF, 2.0 * M)
                rows.add([yv, d["d"], d["b"], zs], [one, -sc * one, -M, -M], -2.0 * M, INF)
                rows.add([yv, d["b"], zs], [one, -M, M], -INF, x0 + M)
                rows.add([yv, d["b"], zs], [one, M, -M], x0 - M, INF)
                if f.increase_only:
                    rows.add([zs, d["d"]], [x0, -sc * one], -INF, 0.0 * one)
            if costs:
                ab = be.add_vars(T, 0.0, INF)                                         # |y - x|
                rows.add([ab, yv], [one, -one], -x0, INF)
                rows.add([ab, yv], [one, one], x0, INF)
                cost.add(ab, a.terms[l].weight * mt)
        rows.flush(be)
        lo = np.array([emb[t][1] for t in ok])
        scores = np.array([int(emb[t][0].add_to(be, Y[j], emb[_check(deadline, t)][3]).score)
                           for j, t in enumerate(ok)])
        rows = RowTemplates(T)
        rows.add([scores, zs], [one, -(target - lo)], lo, INF, mask=lo < target)    # score >= lo + (τ±ε-lo) z
        rows.flush(be)
        z = {t: int(zs[j]) for j, t in enumerate(ok)}
        return be, V, z, cost

    def _action_vars(self, be) -> dict:
        """The shared action variables ``b, s, δ`` and the Tmax row (module docstring)."""
        a = self.a
        V = {}
        rows = RowBuffer()
        for l in a.mutable:
            f = a.feats[l]
            b = int(be.add_vars(1, 0.0, 1.0, VarType.BINARY)[0])
            d: dict[str, Any] = {"b": b}
            if f.encoding == "onehot":
                d["s"] = be.add_vars(len(f.columns), 0.0, 1.0, VarType.BINARY)
                rows.add(np.append(d["s"], b), np.append(np.ones(len(f.columns)), -1.0), 0.0, 0.0)
            elif f.encoding == "binary":
                d["s"] = be.add_vars(1, 0.0, 1.0, VarType.BINARY)
                rows.add([d["s"][0], b], [1.0, -1.0], -INF, 0.0)
            else:
                R = f.high - f.low
                integer = f.integer and round(R) == R and R >= 1
                scale, top = (1.0 / R, R) if integer else (1.0, 1.0)
                vt = VarType.INTEGER if integer else VarType.CONTINUOUS
                if a.numeric == "shift":
                    d["d"] = int(be.add_vars(1, 0.0 if f.increase_only else -top, top, vt)[0])
                    rows.add([d["d"], b], [scale, -1.0], -INF, 0.0)
                    rows.add([d["d"], b], [-scale, -1.0], -INF, 0.0)
                else:
                    d["d"] = int(be.add_vars(1, 0.0, top, vt)[0])
                d["scale"] = scale
            V[l] = d
        if a.Tmax is not None and a.mutable:
            rows.add([V[l]["b"] for l in a.mutable], 1.0, -INF, float(a.Tmax))
        rows.flush(be)
        return V

    def _start_values(self, V, act: Action) -> tuple[np.ndarray, np.ndarray]:
        """``(variables, values)``: ``act`` in the action variables ``V`` (a MIP start;
        the solver completes the types' inputs and the models)."""
        ch = dict(act.changes)
        idx: list[int] = []
        val: list[float] = []
        for l in self.a.mutable:
            d, enc, on = V[l], self.a.feats[l].encoding, l in ch
            idx.append(d["b"])
            val.append(float(on))
            if enc == "onehot":
                idx += [int(v) for v in d["s"]]
                val += [float(on and int(ch[l]) == h) for h in range(len(d["s"]))]
            elif enc == "binary":
                idx.append(int(d["s"][0]))
                val.append(float(ch[l]) if on else 0.0)
            else:
                x = float(ch[l]) if on else 0.0
                idx.append(d["d"])
                val.append(float(round(x / d["scale"])) if d["scale"] != 1.0 else x)
        return np.array(idx, dtype=np.int64), np.array(val)

    # ------------------------------------------------------------------ solves
    def best(self, pi: np.ndarray, time_limit: float | None = None, n_solutions: int = 1,
             relaxed: bool = False) -> PricingResult:
        r"""``max Σ_t π_t z_t`` over the types with ``π_t > 0``; with ``relaxed`` (score
        :math:`\ge \tau - \varepsilon`) its bound is valid for coverage at :math:`\tau`,
        its actions may not cover (module docstring)."""
        types = [int(t) for t in np.flatnonzero(pi > 1e-9)]
        self.calls += 1
        be, V, z, _ = self._build(types, False, time_limit, relaxed=relaxed)
        if not z:
            return PricingResult(Status.OPTIMAL, [], 0.0, 0.0)
        zs = np.array(list(z.values()))
        be.set_objective(zs, -pi[list(z.keys())], sense="min")
        if n_solutions > 1 and not be.capabilities.multiple_solutions:
            n_solutions = 1
        sol = be.solve(n_solutions=n_solutions) if n_solutions > 1 else be.solve()
        if not sol.status.has_solution:
            return PricingResult(sol.status, time=sol.solve_time)
        bound = -sol.dual_bound if sol.dual_bound is not None and math.isfinite(sol.dual_bound) else None
        if bound is None and sol.status == Status.OPTIMAL:
            bound = -sol.objective
        acts = [self._action(x, V, z) for x in [sol.x] + list(sol.pool)]
        return PricingResult(sol.status, unique_actions(acts), -float(sol.objective), bound, sol.solve_time)

    def cheapest(self, types, time_limit: float | None = None, relaxed: bool = False,
                 start: Action | None = None) -> PricingResult:
        r"""The action covering every type of ``types`` at the least total cost
        (``INFEASIBLE`` when none does). Over more than :data:`LAZY_FROM` types with
        ``numeric="shift"`` the coverage rows are generated lazily (:meth:`_cheapest_lazy`).
        With ``relaxed`` (one MIP, score :math:`\ge \tau - \varepsilon`): ``INFEASIBLE``
        proves that no action covers them at :math:`\tau`; a solution may not cover.
        ``start``: an action known to cover them all (the polish's assigned action),
        offered as the MIP start: its cost is an incumbent that prunes the search, and
        the answer is ``start`` itself as soon as the dual bound shows nothing cheaper
        (within the solver's relative gap, as for any optimum)."""
        types = [int(t) for t in types]
        key = (relaxed, *sorted(types))
        hit = self._cheapest_seen.get(key)
        if hit is None:
            lazy = len(types) > LAZY_FROM and self.a.numeric == "shift" and not relaxed
            hit = self._cheapest_lazy(types, time_limit, start) if lazy \
                else self._cheapest(types, time_limit, relaxed, start)
            if hit.status in (Status.OPTIMAL, Status.INFEASIBLE):     # proven: the same answer next time
                self._cheapest_seen[key] = hit
        return hit

    def _cheapest(self, types: list, time_limit: float | None, relaxed: bool = False,
                  start: Action | None = None) -> PricingResult:
        """:meth:`cheapest` as one MIP over every type of ``types``."""
        self.calls += 1
        be, V, z, cost = self._build(types, True, time_limit, relaxed=relaxed, start=start)
        if be is None:
            return PricingResult(Status.INFEASIBLE)
        idx, coef, offset = cost.arrays()
        if len(idx):
            be.set_objective(idx, coef, sense="min", offset=offset)
        sol = be.solve()
        if not sol.status.has_solution:
            return PricingResult(sol.status, time=sol.solve_time)
        bound = sol.dual_bound if sol.dual_bound is not None and math.isfinite(sol.dual_bound) else None
        obj = float(sol.objective) if len(idx) else 0.0
        return PricingResult(sol.status, [self._action(sol.x, V, z, repair=types)], obj, bound, sol.solve_time)

    def _cheapest_lazy(self, types: list, time_limit: float | None, start: Action | None = None) -> PricingResult:
        """:meth:`cheapest` by row generation. The total cost over ``types`` is linear in
        the action variables alone (:meth:`_total_cost`), so a MIP that embeds the model
        only for a subset ``R`` of the types and minimises that cost is a relaxation: its
        optimum is a lower bound. Start from the :data:`LAZY_FROM` types of lowest score;
        after each solve, check the action on every type with the numpy model; stop when
        it covers them all (then it is optimal whenever the relaxation was solved to
        optimality), else add the uncovered types of lowest score to ``R`` (at most as many
        as ``R`` holds: the rounds are logarithmic in ``len(types)``) and re-solve.

        With ``start`` covering every type (its total cost :math:`C_0`), each round's MIP
        starts from it; once a round's dual bound reaches :math:`C_0` (less the solver's
        default relative gap, :data:`START_GAP`) nothing covering ``R`` — so nothing
        covering ``types`` — is cheaper: ``start`` is the answer, with that bound."""
        a = self.a
        deadline = Deadline(time_limit)
        tt = np.asarray(types, dtype=np.int64)
        score0 = a.embedding.score(a.Z[tt])
        c0 = None
        if start is not None and a.cover(start)[tt].all():
            c0 = float(a.m[tt] @ a.costs(start)[tt])
        R = [int(t) for t in tt[np.argsort(score0, kind="stable")[:LAZY_FROM]]]
        while True:
            self.calls += 1
            be, V, z, _ = self._build(R, True, deadline.left(), costs=False, start=None if c0 is None else start)
            if be is None:
                return PricingResult(Status.INFEASIBLE)
            idx, coef, offset = self._total_cost(be, V, tt)
            if len(idx):
                be.set_objective(idx, coef, sense="min", offset=offset)
            sol = be.solve()
            bound = sol.dual_bound if sol.dual_bound is not None and math.isfinite(sol.dual_bound) else None
            if start is not None and c0 is not None and bound is not None and bound >= c0 - START_GAP * abs(c0) - 1e-9:
                return PricingResult(Status.OPTIMAL, [start], c0, bound, sol.solve_time)
            if not sol.status.has_solution:
                return PricingResult(sol.status, time=sol.solve_time)
            act = self._action(sol.x, V, z, repair=R)
            Zp, valid = a.apply(act, a.Z[tt], a.codes[tt])
            s = np.full(len(tt), -np.inf)
            s[valid] = a.embedding.score(Zp[valid])
            missing = np.flatnonzero((s < a.tau) & ~np.isin(tt, R))
            if not (s < a.tau).any():
                obj = float(sol.objective) if len(idx) else 0.0
                return PricingResult(sol.status, [act], obj, bound, sol.solve_time)
            if not len(missing) or deadline.passed:      # a type of R uncovered (tolerances), or no time
                return PricingResult(Status.TIME_LIMIT if deadline.passed else Status.ERROR)
            R += [int(t) for t in tt[missing[np.argsort(s[missing], kind="stable")[:max(LAZY_FROM, len(R))]]]]

    def _total_cost(self, be, V, tt: np.ndarray):
        """``(variables, coefficients, constant)``: the total cost ``Σ_t m_t d_ta`` over
        the types ``tt`` as a linear function of the action variables (``numeric="shift"``),
        from the same :class:`~groupcf.global_actions.actions.CostTerm` as the per-type
        form: a category ``s_h`` costs each type its term ``P_h``; a binary feature's
        ``b`` costs ``P_0`` and its value ``s`` ``P_1 - P_0``; a shift ``|δ|`` (a new
        variable) costs everyone its weight."""
        a = self.a
        m = a.m[tt]
        cost = CostBuilder()
        for l in a.mutable:
            f, d = a.feats[l], V[l]
            if f.encoding != "continuous":
                P = m @ a.terms[l].by_category(a.codes[tt, l])           # Σ_t m_t × the term of each category
                if f.encoding == "onehot":
                    cost.add(d["s"], P)
                else:
                    cost.add([d["b"], d["s"][0]], [P[0], P[1] - P[0]])
            else:
                ab = int(be.add_vars(1, 0.0, INF)[0])
                sc = d["scale"]
                be.add_row([ab, d["d"]], [1.0, -sc], 0.0, INF)
                be.add_row([ab, d["d"]], [1.0, sc], 0.0, INF)
                cost.add([ab], [a.terms[l].weight * float(m.sum())])
        return cost.arrays()

    def _action(self, x, V, z, repair=None) -> Action:
        """The action of a MIP solution; a shift is moved (by solver noise at most) into
        the range every covered type allows."""
        a = self.a
        x = np.asarray(x, dtype=float)
        covered = [t for t, zt in z.items() if x[zt] > 0.5] if repair is None else list(repair)
        changes: list[tuple[int, float]] = []
        for l in a.mutable:
            d = V[l]
            if x[d["b"]] < 0.5:
                continue
            f = a.feats[l]
            if f.encoding == "onehot":
                changes.append((l, int(np.argmax(x[d["s"]]))))
            elif f.encoding == "binary":
                changes.append((l, int(x[d["s"][0]] > 0.5)))
            else:
                val = x[d["d"]]
                if d["scale"] != 1.0:
                    val = round(val) * d["scale"]
                if a.numeric == "shift" and covered and d["scale"] == 1.0:
                    xs = a.Z[covered, f.columns[0]]
                    lo, hi = float(-xs.min()), float(1.0 - xs.max())
                    if lo <= hi:
                        val = min(max(val, lo), hi)
                if a.numeric == "shift" and abs(val) < 1e-9:
                    continue
                changes.append((l, float(val)))
        return Action(tuple(changes))


class ExactLevel(PricingLevel):
    r"""The pricing MIP over the types with a positive dual, relaxed to the score
    :math:`\tau - \varepsilon` (:mod:`~groupcf.global_actions.pricing`): exact, its dual
    bound is β — valid also when ``time_cap`` stops it early (then it proves nothing).
    Its columns enter on their real covers; when none of them really improves and
    nothing is proven, the MIP is solved once more at :math:`\tau + \varepsilon` for
    columns (``resolves`` counts these), the bound staying the relaxed one."""

    name = "pricing-mip"
    exact = True

    def __init__(self, mip: ActionMIP, n_solutions: int = 5, time_cap: float | None = None):
        super().__init__()
        self.mip, self.n_solutions, self.time_cap = mip, n_solutions, time_cap
        self.resolves = 0

    def price(self, duals, ctx):
        res = self.mip.best(duals.pi, time_limit=_cap(ctx.deadline, self.time_cap), n_solutions=self.n_solutions,
                            relaxed=True)
        if not res.status.has_solution:
            if ctx.deadline.passed or res.bound is None:
                return Priced(stop=Status.TIME_LIMIT if ctx.deadline.passed else res.status)
            return Priced([], dual_bound=res.bound)
        cols = [self.mip.a.column(act, "pricing") for act in res.actions]
        proof = res.optimal and res.bound is not None and res.bound <= duals.price + EPS
        if not proof and not ctx.deadline.passed and not any(duals.reduced(c) > EPS for c in cols):
            # the relaxed optima improve only inside the band [τ - ε, τ): columns from the strict MIP
            self.resolves += 1
            strict = self.mip.best(duals.pi, time_limit=_cap(ctx.deadline, self.time_cap),
                                   n_solutions=self.n_solutions)
            seen = {c.key for c in cols}
            cols += [self.mip.a.column(act, "pricing") for act in strict.actions if act.key not in seen]
        return Priced(cols, dual_bound=res.bound, proof=proof)


def _cap(deadline: Deadline, cap: float | None) -> float | None:
    left = deadline.left()
    if cap is None:
        return left
    return cap if left is None else min(left, cap)
