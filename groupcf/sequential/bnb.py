r"""A certified lower bound on the cost of every valid action sequence, by branch and bound
over the actions' tweak values (not in Naumann & Ntoutsi 2021).

**What is kept.** Which actions are taken and how far; the model, exactly (no
discretisation): a box of tweak values is bounded through a linear relaxation of the
network (:func:`groupcf.embeddings.crown.linear_upper`) that becomes tight as boxes
shrink; every cost, at its cheapest over the states in which the action can be taken in
the orders the actions allow; and the *order* of the actions whose effect or cost depends
on what other actions did ("interacting" actions, below), which is enumerated exactly.

**What is relaxed** (each step only enlarges the feasible set or lowers a cost):

1. conditions of actions whose order is not enumerated (below), except pre-conditions that
   fail at the start on features no other action changes (the action is never possible),
   ``f' > f`` / ``f' < f`` on an action's own feature (a sign of its tweak) and
   ``f' op c`` on a feature with a single changer (a range of its tweak, taken with 0 for
   "not taken"); for the actions whose order *is* enumerated, a box is dropped only when
   one of their pre/post-conditions fails for every state in the box's intervals (so the
   authors' "capital loss only while capital gain < 1" and vice versa survive); strict
   inequalities become non-strict; a pre-condition that no reachable state can break is
   ignored;
2. the rule that every step changes something by ``min_change``, and that a sequence is
   non-empty (implied: the start is rejected);
3. the order of the *commuting* actions: an ``add`` action whose cost is ``AbsChange``,
   ``Constant`` or ``CustomCost`` (which enters with its declared ``min_cost``), whose
   consequences are linear and whose pre-conditions read nothing another action changes
   moves the state by :math:`\delta_i d_i` whatever the order (:math:`d_i` = its feature
   plus the consequence factors), so the final state is :math:`x^0 + \sum_i \delta_i d_i`
   exactly, :math:`\delta_i` the *actual* change of its feature. With rounding to
   ``decimals`` this stays exact when the start is rounded and the consequence factors are
   integers (each change is then a multiple of the rounding unit); otherwise
   :func:`bnb_bound` declines (``None``) and the MIP bound is used. Each such
   :math:`\delta_i` is then a multiple of the unit :math:`10^{-\text{decimals}}` (a
   difference of rounded values), and every box keeps only those multiples
   (:func:`_snap`): kept, not relaxed, so a box with one value per tweak is bounded exactly;
4. for *interacting* actions (a ``RelativeSquared`` cost whose feature another action
   changes, a :class:`~groupcf.sequential.actions.Nonlinear` consequence, a pre-condition
   on a feature another action changes, and the actions changing what these read) every
   ordered subset is a separate case ("combo"); within it, a state-dependent quantity (the
   old value in a relative cost, a nonlinear consequence, a condition's operands) is
   replaced by its interval over the node's box, computed along that order with the
   actions' interval extensions (``Nonlinear.interval``, else its ``box``);
   ``RelativeSquared`` then costs at least
   :math:`\delta^2 / \max_{o \in O} (o - \text{offset})^2`;
5. ``set`` actions: each is absent or sets one of its values (a combo); two on one feature
   are dominated by one of them alone (same final value, smaller cost) and skipped.

**Proof of validity.** Let :math:`S` be any valid sequence of cost :math:`C(S)`. Its set
actions and the order of its interacting actions select one combo :math:`k`; its tweak
values :math:`y(S)` (plus the exact values of the combo's nonlinear consequences) lie in
the root box of :math:`k`, and within any box :math:`B \ni y(S)` of the branching tree
every interval above contains the quantity it replaces, so :math:`C(S) \ge c_B(y(S))`, the
node's separable cost model, and the final input is :math:`z = A_k y(S) + c_k` with
``score(z) >= cut``, hence :math:`a_B \cdot y(S) + d_B \ge` cut by the linear relaxation.
For every :math:`\lambda \ge 0`,

.. math::

    c_B(y) \ge c_B(y) - \lambda (a_B \cdot y + d_B - \text{cut})
    \ge \sum_j \min_{y_j \in B_j} \big(c_{B,j}(y_j) - \lambda a_{B,j} y_j\big)
      - \lambda (d_B - \text{cut}) =: g_B(\lambda),

so :math:`C(S) \ge \max_\lambda g_B(\lambda) =: LB(B)` (each one-dimensional minimum is
exact: a convex function of one variable is minimised at an end, at 0, or at a clipped
stationary point). A box whose relaxation cannot reach ``cut`` holds no valid sequence.
The leaves of the tree cover every root box, so :math:`\min(\text{cap}, \min_{\text{open
leaves}} LB)` is a lower bound on the cost of every valid sequence, where ``cap`` is the
cost of a known valid sequence (leaves with :math:`LB \ge` cap are dropped: they hold
nothing cheaper than it). Stopping early (time limit) returns this minimum over the leaves
still open, which is still valid.

Points found in the leaves (the Lagrangian minimisers, re-scored by the real model) are
replayed as real sequences (every step checked); a valid, accepted one lowers ``cap``.
"""
from __future__ import annotations

import itertools
import logging
import math
import time

import numpy as np

from groupcf.exceptions import ValidationError
from groupcf.sequential.bnb_model import _Model, _NotExpressible
from groupcf.sequential.bound import PROVEN_RTOL, proven
from groupcf.sequential.engine import Problem

logger = logging.getLogger(__name__)
INF = math.inf


def _lagrangian(a, d, cut, lo, hi, w, q, lam):
    """``g(lambda)`` per node and candidate (``lam``: ``(K, L)``) and the minimisers."""
    A = a[:, None, :]
    L_, H_ = lo[:, None, :], hi[:, None, :]
    W, Q = w[None, None, :], q[:, None, :]
    lm = lam[:, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        sp = np.where(Q > 0, (lm * A - W) / (2 * Q), np.where(lm * A - W > 0, INF, -INF))
        sn = np.where(Q > 0, (lm * A + W) / (2 * Q), np.where(lm * A + W > 0, INF, -INF))
    cand = np.stack(np.broadcast_arrays(L_, H_, np.clip(0.0, L_, H_), np.clip(sp, L_, H_),
                                        np.clip(sn, L_, H_)), -1)
    f = W[..., None] * np.abs(cand) + Q[..., None] * cand * cand - (lm * A)[..., None] * cand
    k = f.argmin(-1)
    y = np.take_along_axis(cand, k[..., None], -1)[..., 0]
    g = f.min(-1).sum(-1) - lam * (d[:, None] - cut)
    return g, y


def _node_bound(model, combos, lo, hi, emb, cut):
    """Lower bound, branching variable and a candidate point per node (batched)."""
    K, p = lo.shape
    A = np.stack([combos[k]["A"] for k in range(K)]) if K else np.zeros((0, 0, p))
    z0 = np.stack([combos[k]["z0"] for k in range(K)]) if K else np.zeros((0, 0))
    out = emb.linear_upper(A, z0, lo, hi)
    if out is None:
        return None
    a, d = out
    reach = d + np.maximum(a * lo, a * hi).sum(1)
    feasible = reach >= cut
    w, q = model.w, model.q
    ratios = np.where((np.abs(a) > 0) & (w[None, :] > 0), w[None, :] / np.maximum(np.abs(a), 1e-300), 0.0)
    grid = np.broadcast_to(10.0 ** np.linspace(-6, 6, 49), (K, 49))
    lam = np.concatenate([np.zeros((K, 1)), ratios, ratios * (1 + 1e-9), grid], 1)
    g, y = _lagrangian(a, d, cut, lo, hi, w, q, lam)
    best = g.argmax(1)
    lb = g[np.arange(K), best]
    lam_b = lam[np.arange(K), best]
    ref = lam_b[:, None] * np.exp(np.linspace(-0.6, 0.6, 13))[None, :]   # refine around the best
    g2, y2 = _lagrangian(a, d, cut, lo, hi, w, q, ref)
    lb = np.maximum(lb, g2.max(1))
    # candidate points: minimisers just above the best multiplier (on the accepted side)
    up = _lagrangian(a, d, cut, lo, hi, w, q, np.stack([lam_b * 1.05 + 1e-12, lam_b * 1.5 + 1e-9], 1))[1]
    used = (np.abs(lo) > 0) | (np.abs(hi) > 0)
    const = (model.const_if_used[None, :] * ((lo > 0) | (hi < 0))).sum(1)
    lb = np.where(feasible, np.maximum(lb, 0.0) + const, INF)
    width = (hi - lo) * used
    unit = model.unit[None, :]
    width = np.where((unit > 0) & (hi - lo < 0.5 * unit), 0.0, width)     # one multiple of the unit left
    # branch on the tweak whose range moves the score most (|weight| x width)
    score = np.abs(a) * width + 1e-12 * width
    if width.shape[1] == 0:          # set actions only: no tweak value to branch on
        return lb, np.full(K, -1), up
    branch = np.where(width.max(1) > 1e-9, score.argmax(1), -1)
    return lb, branch, up


def bnb_bound(problem: Problem, encoding, time_limit: float = 10.0, cap: float | None = None,
              batch: int = 256, rtol: float = PROVEN_RTOL):
    """The certified lower bound of the module docstring, or ``None`` when the problem
    cannot be expressed (then :func:`groupcf.sequential.bound.sequence_bound` is used).

    Returns a :class:`~groupcf.sequential.bound.Bound`; ``status`` is ``optimal`` when the
    bound meets the cheapest valid sequence known (``cap`` or one found here), else
    ``branch_and_bound`` (stopped by the time limit), ``infeasible`` when no sequence can
    be accepted."""
    from groupcf.sequential.bound import _boxes, _ranges
    t_end = time.perf_counter() + time_limit
    emb = problem.model.embedding
    if emb is None or encoding is None or not hasattr(encoding, "columns"):
        return None
    for a in problem.actions:
        if a.kind == "add" and a.static_range is None:
            return None
    cats = encoding.categories
    r0 = _ranges(problem, None)
    lo0, hi0, _ = _boxes(problem, cats, r0)
    ranges = _ranges(problem, cap, (lo0, hi0))
    try:
        model = _Model(problem, encoding, ranges, cap, (lo0, hi0))
    except _NotExpressible as exc:
        logger.info("no branch-and-bound bound: %s", exc)
        return None
    cut = problem.model.logit_threshold
    combos = model.combos
    best_cap = INF if cap is None else float(cap)
    try:
        with _one_thread():
            return _search(problem, model, combos, emb, cut, best_cap, t_end, rtol, batch)
    except _NotExpressible as exc:       # the model offers no linear relaxation
        logger.info("no branch-and-bound bound: %s", exc)
        return None


def _one_thread():
    """Small batched products run faster on one BLAS thread (and leave the other cores
    alone)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:        # pragma: no cover - threadpoolctl comes with scikit-learn
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(1)


def _search(problem, model, combos, emb, cut, best_cap, t_end, rtol, batch):
    from groupcf.sequential.bound import Bound, BoundStatus
    CONST = np.array([c["const"] for c in combos])
    LO = np.array([c["lo"] for c in combos])
    HI = np.array([c["hi"] for c in combos])
    CB = np.arange(len(combos))
    steps, steps_cost = None, None
    t0 = time.perf_counter()
    lb_all, br_all, LO, HI, CB = _evaluate(model, combos, LO, HI, CB, CONST, emb, cut, best_cap)
    n_nodes = len(CB)
    closed = False
    while True:
        keep = lb_all < best_cap * (1 - 1e-12)
        lb_all, br_all, LO, HI, CB = lb_all[keep], br_all[keep], LO[keep], HI[keep], CB[keep]
        if not len(lb_all):
            closed = True
            break
        glb = min(best_cap, float(lb_all.min()))
        if best_cap < INF and proven(best_cap, glb, rtol):              # relative, as is_optimal
            closed = True
            break
        if time.perf_counter() >= t_end:
            break
        splittable = br_all >= 0
        if not splittable.any():
            break
        cand = np.flatnonzero(splittable)
        take = cand[np.argsort(lb_all[cand], kind="stable")[:batch]]
        rest = np.setdiff1d(np.arange(len(lb_all)), take)
        lo_t, hi_t, cb_t, br_t = LO[take], HI[take], CB[take], br_all[take]
        r = np.arange(len(take))
        l_, h_ = lo_t[r, br_t], hi_t[r, br_t]
        mid = np.where((l_ < 0) & (h_ > 0), 0.0, 0.5 * (l_ + h_))
        u = model.unit[br_t]
        if (u > 0).any():        # between two multiples of the unit (_snap): the children do not overlap
            us = np.where(u > 0, u, 1.0)
            kl, kh = np.round(l_ / us + SNAP), np.round(h_ / us - SNAP)
            mid = np.where(u > 0, np.where((kl < 0) & (kh > 0), -0.5, np.floor(0.5 * (kl + kh)) + 0.5) * us, mid)
        lo_a, hi_a = lo_t.copy(), hi_t.copy()
        hi_a[r, br_t] = mid
        lo_b, hi_b = lo_t.copy(), hi_t.copy()
        lo_b[r, br_t] = mid
        nlo, nhi, ncb = np.vstack([lo_a, lo_b]), np.vstack([hi_a, hi_b]), np.concatenate([cb_t, cb_t])
        lb_n, br_n, nlo, nhi, ncb, pts = _evaluate(model, combos, nlo, nhi, ncb, CONST, emb, cut, best_cap, points=True)
        n_nodes += len(ncb)
        lb_all = np.concatenate([lb_all[rest], lb_n])
        br_all = np.concatenate([br_all[rest], br_n])
        LO, HI, CB = np.vstack([LO[rest], nlo]), np.vstack([HI[rest], nhi]), np.concatenate([CB[rest], ncb])
        for k, y in pts:       # replay promising points as real sequences
            found = _try_replay(model, combos[k], y, best_cap)
            if found is not None:
                best_cap, steps_cost, steps = found[1], found[1], found[0]
    glb = best_cap if not len(lb_all) else min(best_cap, float(lb_all.min()))
    if len(lb_all) and logger.isEnabledFor(logging.DEBUG):
        k = int(lb_all.argmin())
        logger.debug("weakest leaf: combo %d, lb %.6g, box %s .. %s, branch %d", CB[k], lb_all[k],
                     LO[k], HI[k], br_all[k])
    logger.info("bnb bound %.6g (cap %.6g), %d nodes, %d combos, %.2fs", glb, best_cap, n_nodes,
                len(combos), time.perf_counter() - t0)
    if not np.isfinite(glb):
        return Bound(INF, BoundStatus.INFEASIBLE, solve_time=time.perf_counter() - t0)
    status = BoundStatus.OPTIMAL if closed else BoundStatus.BRANCH_AND_BOUND
    b = Bound(float(glb), status, steps, steps_cost, time.perf_counter() - t0)
    b.nodes = n_nodes
    return b


def _evaluate(model, combos, LO, HI, CB, CONST, emb, cut, cap=INF, points=False):
    """Node bounds; nodes whose slot intervals are empty are dropped."""
    K = len(CB)
    LO, HI = LO.copy(), HI.copy()
    model.q = None
    Q = np.zeros((K, model.p))
    ok = np.ones(K, bool)
    for k in np.unique(CB):
        rows = np.flatnonzero(k == CB)
        _, _, q, (sl, sh), _, cond_ok = model._replay(combos[k], LO[rows], HI[rows])
        Q[rows] = q
        ok[rows] &= cond_ok
        for s in sl:
            LO[rows, s] = np.maximum(LO[rows, s], sl[s])
            HI[rows, s] = np.minimum(HI[rows, s], sh[s])
    _snap(LO, HI, model.unit)
    ok &= np.all(LO <= HI + 1e-12, 1)
    HI = np.maximum(HI, LO)
    if np.isfinite(cap):      # drop what costs more than cap: |y_j| <= r_j from the others' least costs
        w, used = model.w[None, :], (LO > 0) | (HI < 0)
        dist = np.where(LO > 0, LO, np.where(HI < 0, -HI, 0.0))
        least = w * dist + Q * dist * dist
        budget = cap - CONST[CB] - (model.const_if_used[None, :] * used).sum(1)
        room = budget[:, None] - (least.sum(1)[:, None] - least)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(Q > 0, (-w + np.sqrt(w * w + 4 * Q * np.maximum(room, 0))) / (2 * np.where(Q > 0, Q, 1)),
                         np.where(w > 0, np.maximum(room, 0) / np.where(w > 0, w, 1), INF))
        costly = (w > 0) | (Q > 0)
        LO = np.where(costly, np.maximum(LO, -r), LO)
        HI = np.where(costly, np.minimum(HI, r), HI)
        _snap(LO, HI, model.unit)
        ok &= budget - least.sum(1) >= 0
        ok &= np.all(LO <= HI + 1e-12, 1)
        HI = np.maximum(HI, LO)
    res = []
    lb = np.full(K, INF)
    br = np.full(K, -1)
    for start in range(0, K, 512):
        sl_ = slice(start, min(K, start + 512))
        model.q = Q[sl_]
        out = _node_bound(model, [combos[k] for k in CB[sl_]], LO[sl_], HI[sl_], emb, cut)
        if out is None:
            raise _NotExpressible("the model has no linear relaxation")
        lb[sl_], br[sl_], up = out
        if points:
            for t in range(up.shape[1]):
                res.append((np.arange(sl_.start, sl_.stop), up[:, t, :]))
    lb = np.where(ok, lb + CONST[CB], INF)
    pts = []
    if points and res:
        idx = np.concatenate([r[0] for r in res])
        Y = np.vstack([r[1] for r in res])
        As = np.stack([c["A"] for c in combos])
        Z0 = np.stack([c["z0"] for c in combos])
        cb = CB[idx]
        Z = (As[cb] @ Y[:, :, None])[..., 0] + Z0[cb]
        s = emb.score(Z)
        good = np.flatnonzero((s >= cut) & ok[idx])
        if len(good):
            Yg, Qg = Y[good], Q[idx[good]]
            cost = (CONST[cb[good]] + np.abs(Yg) @ model.w + (Qg * Yg * Yg).sum(1)
                    + (np.abs(Yg) > 0) @ model.const_if_used)
            g = good[int(cost.argmin())]
            if cost.min() < cap * (1 - 1e-6):
                pts.append((cb[g], Y[g]))
    keep = np.isfinite(lb)
    out = (lb[keep], br[keep], LO[keep], HI[keep], CB[keep])
    return (*out, pts) if points else out


#: slack of :func:`_snap`, in units: the actual changes are differences of rounded floats
SNAP = 1e-6


def _snap(LO, HI, unit) -> None:
    """Shrink, in place, each tweak interval that has a rounding ``unit`` (``decimals``) to the
    multiples of the unit in it, give or take ``SNAP`` units: an add action's actual change
    is such a multiple (the start and every state after an action are rounded), so no valid
    sequence leaves the box. A box then has finitely many values per tweak, each branched
    alone in the end, where the relaxation is exact: the search can close the gap that
    rounding opens between the continuous optimum and the cheapest rounded one."""
    g = np.flatnonzero(unit > 0)
    if not len(g):
        return
    u = unit[g]
    LO[:, g] = np.ceil(LO[:, g] / u - SNAP) * u - SNAP * u
    HI[:, g] = np.floor(HI[:, g] / u + SNAP) * u + SNAP * u


def _try_replay(model, combo, y, cap):
    """A real sequence near the point ``y`` of a combo, if one is valid, accepted and
    cheaper than ``cap``: ``(steps, cost)`` or ``None``."""
    problem = model.problem
    aset = problem.actions
    head = [(aset[i].name, float(v)) for i, v in combo["sets"]]
    inter = [(aset[i].name, float(y[model.var[i]])) for i in combo["order"]]
    comm = [i for i in model.commuting if abs(y[model.var[i]]) >= max(problem.min_change, 1e-12)]
    best = None
    for scale in (1.0, 1.001, 1.01):
        for perm in itertools.islice(itertools.permutations(comm), 24):
            tail = [(aset[i].name, float(y[model.var[i]] * scale)) for i in perm]
            steps = [*head, *[(n, v * scale) for n, v in inter], *tail]
            if not steps:
                continue
            try:
                cost, _, _, final = problem.replay(steps)
            except (ValidationError, KeyError):
                continue
            if problem.accepts(final) and cost < cap and (best is None or cost < best[1]):
                best = (steps, cost)
        if best is not None:
            return best
    return None
