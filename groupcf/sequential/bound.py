r"""A certified lower bound on the cost of any valid action sequence (a MIP on the model's
embedding; not in Naumann & Ntoutsi 2021).

Without consequential discounts the cost of a sequence is :math:`\sum_i b_i`, and the order
of the actions matters only through state-dependent ranges, costs and effects. The MIP
keeps the order out and relaxes what depends on it:

.. math::

    \min \sum_i c_i \quad \text{s.t.}\quad
    \mathrm{score}(\mathrm{enc}(x)) \ge 0,\;\;
    \textstyle\sum_i u_i \ge 1,\;\;
    u_i\,\underline{v}_i \le \delta_i \le u_i\,\overline{v}_i,\\
    x_f = x^0_f + \textstyle\sum_{i:\,f_i = f} \delta_i + \sum_{i} k_{if}\,\delta_i
    \quad(\text{numeric } f),\qquad
    z_{f,c} \le \textstyle\sum_{i \text{ sets } c} u_i,\; \sum_c z_{f,c} = 1
    \quad(\text{categorical } f),

with :math:`u_i \in \{0, 1\}` (action used), :math:`\delta_i` its tweak value and
:math:`k_{if}` a linear consequence factor. The embedding is
:meth:`groupcf.embeddings.base.Embedding.add_to` over the box every final state lies in.
Costs, each a lower bound on :math:`b_i` whenever action :math:`i` is used:

* constant :math:`c`: :math:`c_i = c\,u_i`; ``AbsChange``: :math:`c_i \ge \pm w\,\delta_i`
  (exact);
* ``RelativeSquared`` :math:`(\delta/x^{old})^2`: :math:`x^{old}` lies in the box of the
  feature, so :math:`b_i \ge \delta^2/M^2` with :math:`M` the largest :math:`|x^{old}|` in
  it; this convex function enters by tangent cuts (each cut lies below it);
* any other cost: its declared ``min_cost`` (default 0) times :math:`u_i`.

What is relaxed (so the bound stays valid; every relaxation only enlarges the feasible set
or lowers a cost): the order of actions; pre-conditions, except those whose features no
other action changes (then they are exact at :math:`x^0` and a failing one forbids the
action); post-conditions, except ``f' > f`` / ``f' >= f`` (``<``) on an action's own
feature (a sign of :math:`\delta_i`, exact) and ``f' op c`` held by *every* action that
can change ``f`` (then the final :math:`x_f` lies in the hull of :math:`x^0_f` and
``op c``); strict inequalities become non-strict; the rule that every step changes
something; rounding of states; state-dependent ranges are replaced by the action's
``outer`` box; a consequence given by a callable lets its feature take any value in the
hull of its reach box (plus the other actions' linear effects). Discounts are ignored
(:math:`g \le 1` would only give the trivial bound 0 on the discounted cost).
The bound is also at least the gradient bound of :mod:`groupcf.sequential.lipschitz`
(linear costs only). An action the MIP cannot express at all (a state-dependent range without ``outer``, an
``add`` action on a categorical feature) makes :func:`sequence_bound` return ``None``.

The bound is the solver's dual bound (HiGHS by default). The MIP's own solution, re-solved
with a small margin on the score, is replayed in every order of its actions; a valid
replay is a real sequence, optimal when its cost meets the bound.
"""
from __future__ import annotations

import enum
import itertools
import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from groupcf.embeddings.tighten import tightened as _tightened
from groupcf.exceptions import ValidationError
from groupcf.features.domain import InputDomain
from groupcf.sequential.actions import (
    AbsChange,
    Condition,
    Constant,
    CustomCost,
    RelativeSquared,
)
from groupcf.sequential.engine import Problem
from groupcf.sequential.lipschitz import lipschitz_bound
from groupcf.solvers.base import Status

logger = logging.getLogger(__name__)
INF = math.inf


class BoundStatus(str, enum.Enum):
    """How a :class:`Bound` was obtained: a solver outcome of the bound MIP
    (:class:`~groupcf.solvers.base.Status` values), raised by bisection on a cost cap, or the
    Lipschitz bound alone."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    TIME_LIMIT = "time_limit"
    ERROR = "error"
    BISECTION = "bisection"
    LIPSCHITZ = "lipschitz"
    BRANCH_AND_BOUND = "branch_and_bound"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def of(cls, status: Status) -> BoundStatus:
        return cls(status.value)


#: a cost within this share of a lower bound counts as proven (relative: an absolute 1e-3
#: "proved" costs of 0.001 against a bound of 0.0005, and German's costs are 0.01-0.5)
PROVEN_RTOL = 1e-3


def proven(cost: float, bound: float, rtol: float = PROVEN_RTOL) -> bool:
    """Whether ``cost`` is within ``rtol`` of the lower ``bound``, relative (plus 1e-9)."""
    return bool(cost <= bound + rtol * abs(bound) + 1e-9)


@dataclass
class Bound:
    """The certified lower bound, its status and the MIP's own sequence."""

    value: float                       # certified lower bound on the undiscounted cost
    status: BoundStatus
    steps: list | None = None          # a replayed valid sequence from the MIP, if any
    steps_cost: float | None = None
    solve_time: float = 0.0
    objective: float | None = None     # cost of the MIP's solution (the relaxation's upper side)


def _ranges(problem: Problem, cap: float | None, boxes=None) -> dict:
    """Per ``add`` action the interval of its tweak value in the MIP: its range, with 0
    (unused), cut by sign post-conditions and, with a cost cap ``C``, by ``b_i <= C``."""
    out = {}
    for i, a in enumerate(problem.actions):
        if a.kind != "add":
            continue
        pad = 10.0 ** -problem.decimals if problem.decimals is not None else 0.0   # rounding
        vlo, vhi = min(a.static_range[0] - pad, 0.0), max(a.static_range[1] + pad, 0.0)
        for cond in a.post:
            if isinstance(cond, Condition) and cond.lhs == a.feature == cond.rhs \
                    and cond.lhs_after and not cond.rhs_after:
                if cond.op in (">", ">="):
                    vlo = max(vlo, 0.0)
                elif cond.op in ("<", "<="):
                    vhi = min(vhi, 0.0)
        if cap is not None:
            w = None
            if isinstance(a.cost, AbsChange) and a.cost.weight > 0:
                w = cap / a.cost.weight
            elif isinstance(a.cost, RelativeSquared) and boxes is not None:
                j = problem.actions.index[a.feature]
                off = a.cost.offset
                w = max(abs(boxes[0][j] - off), abs(boxes[1][j] - off)) * math.sqrt(cap)
            if w is not None:
                vlo, vhi = max(vlo, -w), min(vhi, w)
        out[i] = (vlo, vhi)
    return out


def _boxes(problem: Problem, cats, ranges: dict):
    """Box of every numeric feature over all reachable (intermediate or final) states."""
    idx, x0 = problem.actions.index, problem.x0
    lo, hi = x0.astype(float).copy(), x0.astype(float).copy()
    nonlin: dict[str, list] = {}
    for i, a in enumerate(problem.actions):
        if a.kind == "set":
            if a.feature not in cats:
                nonlin.setdefault(a.feature, []).append((float(min(a.values)), float(max(a.values))))
            continue
        r = ranges[i]
        f = idx[a.feature]
        lo[f] += min(r[0], 0.0)
        hi[f] += max(r[1], 0.0)
        for g, eff in a.consequences.items():
            if isinstance(eff, tuple):
                nonlin.setdefault(g, []).append(eff[1])
            elif callable(eff):
                nonlin.setdefault(g, []).append((-INF, INF))
            else:
                lo[idx[g]] += min(eff * r[0], eff * r[1], 0.0)
                hi[idx[g]] += max(eff * r[0], eff * r[1], 0.0)
    for g, reaches in nonlin.items():
        j = idx[g]
        spread_lo, spread_hi = lo[j] - x0[j], hi[j] - x0[j]
        for rl, rh in reaches:
            lo[j] = min(lo[j], rl + spread_lo)
            hi[j] = max(hi[j], rh + spread_hi)
    return lo, hi, set(nonlin)


def _expressible(problem: Problem, cats) -> str | None:
    for a in problem.actions:
        if a.kind == "add" and a.static_range is None:
            return f"action {a.name!r} has a state-dependent range without outer=(lo, hi)"
        if a.kind == "add" and a.feature in cats:
            return f"action {a.name!r} adds to the categorical feature {a.feature!r}"
        for g, eff in a.consequences.items():
            if g in cats:
                return f"action {a.name!r} has a consequence on the categorical feature {g!r}"
            if callable(eff) and not isinstance(eff, tuple):
                return f"action {a.name!r}: give the consequence on {g!r} as (fn, (lo, hi))"
    return None


def sequence_bound(problem: Problem, encoding, solver="highs", time_limit: float = 30.0,
                   tangents: int = 16, cap: float | None = None) -> Bound | None:
    """The certified lower bound (module docstring) or ``None`` if it cannot be built.

    With ``cap`` (the cost of a known valid sequence) the bound is raised by bisection:
    the MIP capped at ``mid < cap`` has small boxes, hence small big-M constants, and is
    quickly proven infeasible (then ``mid`` is a lower bound) or solved (then the relaxed
    optimum is at most its cost), all within ``time_limit`` seconds.
    """
    t_end = time.perf_counter() + time_limit
    b = _capped_bound(problem, encoding, solver, time_limit / 3, tangents, cap)
    if b is None or cap is None or b.status in (BoundStatus.OPTIMAL, BoundStatus.INFEASIBLE):
        return b
    lo, hi, best = b.value, cap, b
    while hi - lo > PROVEN_RTOL * abs(hi) + 1e-9:     # relative, as is_optimal
        left = t_end - time.perf_counter()
        if left < 0.2:
            break
        mid = 0.5 * (lo + hi)
        bm = _capped_bound(problem, encoding, solver, left, tangents, mid)
        if bm is None:
            break
        if bm.status is BoundStatus.INFEASIBLE:
            lo = mid
        elif bm.objective is not None:
            hi = min(hi, bm.objective)
            lo = max(lo, min(bm.value, mid))
            if bm.steps is not None and (best.steps is None or _steps_cost(bm) < _steps_cost(best)):
                best = bm
        else:
            lo = max(lo, min(bm.value, mid))
            break
    best.value = max(lo, b.value)
    best.status = BoundStatus.OPTIMAL if hi - lo <= PROVEN_RTOL * abs(hi) + 1e-9 else BoundStatus.BISECTION
    return best


def _steps_cost(b: Bound) -> float:
    """Cost of the bound's own sequence (``inf`` without one)."""
    return INF if b.steps_cost is None else b.steps_cost


def _capped_bound(problem: Problem, encoding, solver="highs", time_limit: float = 30.0,
                  tangents: int = 16, cap: float | None = None) -> Bound | None:
    """The certified lower bound (module docstring) or ``None`` if it cannot be built.

    ``cap``: the cost of a known valid sequence (e.g. the GA's cheapest). The optimum is at
    most ``cap``, so adding ``sum_i c_i <= cap`` keeps the bound valid and shrinks every
    tweak range to what costs at most ``cap`` (much tighter big-M constants); if the capped
    MIP is infeasible, ``cap`` itself is the bound."""
    from groupcf.solvers import make_backend
    emb = problem.model.embedding
    if emb is None or encoding is None or not hasattr(encoding, "columns"):
        return None
    cats = encoding.categories
    why = _expressible(problem, cats)
    if why:
        logger.info("no certified bound: %s", why)
        return None
    aset, idx, x0 = problem.actions, problem.actions.index, problem.x0
    r0 = _ranges(problem, None)
    lo0, hi0, _ = _boxes(problem, cats, r0)
    rng = _ranges(problem, cap, (lo0, hi0))
    lo, hi, nonlin = _boxes(problem, cats, rng)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        return None
    changers: dict[str, list] = {}
    for a in aset:
        for f in a.changed_features():
            changers.setdefault(f, []).append(a)
    flo, fhi = lo.copy(), hi.copy()     # final-state box: tightened by shared post-conditions
    for f, acts in changers.items():
        j = idx[f]
        common = set.intersection(*[{(c.op, c.rhs) for c in a.post if isinstance(c, Condition)
                                     and c.lhs == f and c.lhs_after and c.is_constant} for a in acts])
        for op, c in common:
            if op in ("<", "<="):
                fhi[j] = min(fhi[j], max(c, x0[j]))
            elif op in (">", ">="):
                flo[j] = max(flo[j], min(c, x0[j]))
    if np.any(flo > fhi):
        return Bound(INF, BoundStatus.INFEASIBLE)

    def build():
        be = make_backend(solver, time_limit=time_limit, verbose=logger.isEnabledFor(logging.DEBUG))
        nA = len(aset)
        u = be.add_vars(nA, lb=0.0, ub=1.0, vtype="B")
        d = be.add_vars(nA, lb=0.0, ub=0.0)
        c = be.add_vars(nA, lb=0.0, ub=INF)
        be.add_row(u, np.ones(nA), 1.0, INF)
        for i, a in enumerate(aset):
            ui, di, ci = int(u[i]), int(d[i]), int(c[i])
            if _pre_fails(a, aset, x0, idx):
                be.set_bounds([ui], [0.0], [0.0])
            if cap is not None and isinstance(a.cost, Constant) and a.cost.c > cap:
                be.set_bounds([ui], [0.0], [0.0])
            if a.kind == "add":
                vlo, vhi = rng[i]
                be.set_bounds([di], [vlo], [vhi])
                be.add_row([di, ui], [1.0, -vhi], -INF, 0.0)
                be.add_row([di, ui], [1.0, -vlo], 0.0, INF)
            cost = a.cost
            if isinstance(cost, Constant):
                be.add_row([ci, ui], [1.0, -cost.c], 0.0, INF)
            elif isinstance(cost, AbsChange) and a.kind == "add":
                be.add_row([ci, di], [1.0, -cost.weight], 0.0, INF)
                be.add_row([ci, di], [1.0, cost.weight], 0.0, INF)
            elif isinstance(cost, RelativeSquared) and a.kind == "add":
                j = idx[a.feature]
                M = max(abs(lo0[j] - cost.offset), abs(hi0[j] - cost.offset))
                for p in np.linspace(*a.static_range, tangents):
                    be.add_row([ci, di], [1.0, -2 * p / M**2], -p * p / M**2, INF)
            elif isinstance(cost, CustomCost):
                be.add_row([ci, ui], [1.0, -cost.min_cost], 0.0, INF)
        # final state -> model inputs
        cols_lb, cols_ub, integer, onehot, x_idx = [], [], [], [], []
        for j, f in enumerate(aset.features):
            if f in cats:
                codes = cats[f]
                allowed = {float(x0[j])} | {float(v) for a in changers.get(f, []) for v in a.values}
                ub = np.array([1.0 if float(code) in allowed else 0.0 for code in codes])
                z = be.add_vars(len(codes), lb=0.0, ub=ub, vtype="B")
                be.add_row(z, np.ones(len(codes)), 1.0, 1.0)
                for k, code in enumerate(codes):
                    if float(code) != float(x0[j]) and ub[k] > 0:
                        setters = [int(u[i]) for i, a in enumerate(aset) if a.feature == f
                                   and float(code) in {float(v) for v in a.values}]
                        be.add_row([int(z[k]), *setters], [1.0] + [-1.0] * len(setters), -INF, 0.0)
                start = len(cols_lb)
                onehot.append(np.arange(start, start + len(codes)))
                cols_lb += [0.0] * len(codes)
                cols_ub += ub.tolist()
                integer += [True] * len(codes)
                x_idx += [int(v) for v in z]
            else:
                xv = int(be.add_vars(1, lb=flo[j], ub=fhi[j])[0])
                if f not in nonlin:      # x_f = x0_f + linear effects (else: free in its box)
                    terms, coefs = [xv], [1.0]
                    for i, a in enumerate(aset):
                        k = 1.0 if (a.kind == "add" and a.feature == f) else 0.0
                        eff = a.consequences.get(f)
                        if eff is not None and not isinstance(eff, tuple) and not callable(eff):
                            k += float(eff)
                        if k:
                            terms.append(int(d[i]))
                            coefs.append(-k)
                    be.add_row(terms, coefs, float(x0[j]), float(x0[j]))
                cols_lb.append(flo[j])
                cols_ub.append(fhi[j])
                integer.append(False)
                x_idx.append(xv)
        domain = InputDomain(np.array(cols_lb), np.array(cols_ub), np.array(integer), tuple(onehot))
        if cap is not None:
            be.add_row(c, np.ones(nA), -INF, cap * (1 + 1e-9) + 1e-9)
        return be, u, d, c, x_idx, domain

    nA = len(aset)
    emb = _tightened(emb, build)
    be, u, d, c, x_idx, domain = build()
    lip = lipschitz_bound(problem, encoding, emb, domain) or 0.0
    if cap is not None and lip >= cap:
        return Bound(cap, BoundStatus.INFEASIBLE)
    con = emb.add_to(be, x_idx, domain, lo=problem.model.logit_threshold)
    be.set_objective(c, np.ones(nA))
    sol = be.solve()
    if not sol.status.has_solution:
        if sol.status is Status.INFEASIBLE:
            return Bound(INF if cap is None else cap, BoundStatus.INFEASIBLE, solve_time=sol.solve_time)
        if sol.dual_bound is not None and np.isfinite(sol.dual_bound):
            return Bound(float(min(max(sol.dual_bound, lip), INF if cap is None else cap)),
                         BoundStatus.of(sol.status), solve_time=sol.solve_time)
        return Bound(lip, BoundStatus.LIPSCHITZ) if lip > 0 else None
    value = sol.dual_bound if sol.dual_bound is not None else sol.objective
    value = min(max(value, lip), INF if cap is None else cap)
    bound = Bound(float(value), BoundStatus.of(sol.status), solve_time=sol.solve_time,
                  objective=float(sol.objective))
    be.set_row_bounds([con.lo_row], [problem.model.logit_threshold + 1e-4], [INF])   # a margin so the replay is accepted
    sol2 = be.solve() if sol.status is Status.OPTIMAL else None
    if sol2 is not None and sol2.status.has_solution:
        _replay_solution(problem, sol2.x, u, d, bound)
    return bound


def _pre_fails(a, aset, x0, idx) -> bool:
    """A pre-condition whose features no *other* action changes, failing at ``x0``."""
    others = {f for b in aset if b is not a for f in b.changed_features()}
    from groupcf.sequential.actions import StateView
    view = StateView(x0[None, :], idx)
    return any(isinstance(cond, Condition) and not cond.features() & others and not bool(cond(view, None)[0]) for cond in a.pre)


def _replay_solution(problem: Problem, x, u, d, bound: Bound) -> None:
    from groupcf.sequential.result import replay
    used = [i for i in range(len(u)) if x[u[i]] > 0.5 and (
        problem.actions[i].kind == "set" or abs(x[d[i]]) >= max(problem.min_change, 1e-9))]
    best = None
    for perm in itertools.permutations(used):
        steps = [(problem.actions[i].name,
                  float(problem.actions[i].choices[0]) if problem.actions[i].kind == "set"
                  else float(x[d[i]])) for i in perm]
        try:
            cost, _, _probs, final = replay(problem, steps)
        except ValidationError:
            continue
        if problem.model.margin(final[None, :])[0] >= 0 and (best is None or cost < best[1]):
            best = (steps, cost)
    if best is not None:
        bound.steps, bound.steps_cost = best
