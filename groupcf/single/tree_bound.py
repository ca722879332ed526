r"""MACE on tree ensembles: an upper bound from a numpy search, its radius, and the MIP
built over that radius only.

1. **Search** (:func:`upper_bound`), before the MIP is built: every single-feature change
   of the instance :math:`x^0` to a value that can change a split (another category; for
   a continuous column each threshold :math:`t` of the ensemble on it, reached from below
   at :math:`t^+` or from above at :math:`t`, on the feature's integer grid when it has
   one), scored in one vectorised batch by partial evaluation (only the trees whose path
   of :math:`x^0` tests a changed column are walked,
   :meth:`~groupcf.embeddings.base.Embedding.delta_evaluator`); then pairs and triples (a
   beam): the rejected combinations still cheaper than the best accepted point (a further
   change only adds distance), ranked by score gain and by gain per unit of distance, are
   extended by the most promising single changes, and the first few of them by *every*
   single change (a change that gains little alone may complete a combination). If
   nothing is accepted, a greedy path (largest score gain each step until accepted, then
   every unneeded change undone). The best accepted point is polished by coordinate
   descent (each feature moved to its cheapest value that keeps the point accepted). It
   is a feasible solution of the MIP: an upper bound :math:`U`.
2. **Radius** (:meth:`~groupcf.embeddings.base.Embedding.radius`): with weights
   :math:`w_0, w_1, w_\infty` and :math:`|T|` features, changing feature :math:`l` by
   :math:`\delta > 0` costs at least :math:`(w_0 + w_1\delta)/|T| + w_\infty\delta`, so no
   solution better than :math:`U` changes a continuous feature by more than
   :math:`r = (U - w_0/|T|)/(w_1/|T| + w_\infty)`, nor a discrete feature whose cheapest
   change costs more than :math:`U`. The MIP is built over that box only: the ensemble is
   folded over it (:meth:`~groupcf.embeddings.trees.TreeEnsemble.add_to` folds over its
   input domain), so a split the box decides is no binary and a tree with one reachable
   leaf is a constant of the score. With an l0 weight, each changed feature costs at least
   :math:`w_0/|T|`, so at most :math:`k = \lfloor U |T| / w_0 \rfloor` features change (a
   cut :math:`\sum_l f_l \le k`); when :math:`k \le 1` the optimum is the cheapest accepted
   single change, which the scan of step 1 enumerates exactly (:func:`best_single`), and
   the solver is not needed. Valid for any mix of l0 / l1 / linf, for the *best*
   counterfactual only (not for the further diverse ones).
3. **MIP start**: that point with the ensemble's split levels and leaves
   (:meth:`~groupcf.embeddings.trees.TreeConstr.start_values`), and the cardinality cut.
"""
from __future__ import annotations

import math

import numpy as np

from .radius import category_changes, deltas, max_changes

#: changes kept per level of the pair / triple search (by score gain, and by gain per distance)
BEAM = 40
#: of those, combinations extended by *every* single change (scored in their context:
#: a change that gains little alone may complete a combination)
CONTEXT = 8
#: ... fewer when there are many single changes: at most about this many rows scored per level
CONTEXT_ROWS = 12_000


def _scorer(emb, z0):
    """Scores of rows that equal ``z0`` except on a few columns: by partial evaluation
    when the embedding offers it for full rows (``by_rows``), else ``emb.score``."""
    ev = emb.delta_evaluator(z0)
    if not ev.by_rows:
        return emb.score
    return lambda Z: ev.score_rows(Z, z0[None, :] != Z)


def _candidates(space, emb, z0, lb, ub, can_change):
    """Single-feature changes: list of ``(feature, columns, values)``."""
    out = []
    split_cols = emb.feature[emb.feature >= 0]
    for l, f in enumerate(space):
        if not can_change[l] or f.immutable:
            continue
        cols = np.asarray(f.columns)
        vals = category_changes(f, z0, lb, ub)
        if vals is not None:
            out.extend((l, cols, v) for v in vals)
        else:
            c = int(cols[0])
            thr = np.unique(emb.threshold[emb.feature == c]) if np.any(split_cols == c) else []
            rng = f.high - f.low
            for t in thr:
                v = float(np.nextafter(t, np.inf)) if z0[c] <= t else float(t)
                if f.integer and rng > 0:
                    raw = f.low + v * rng
                    raw = math.ceil(raw - 1e-9) if z0[c] <= t else math.floor(raw + 1e-9)
                    v = (raw - f.low) / rng
                if lb[c] <= v <= ub[c] and v != z0[c]:
                    out.append((l, cols, np.array([v])))
    return out


def upper_bound(space, emb, z0, lb, ub, can_change, distance, score_lo, Tmax=None):
    """``(point, objective)`` of the cheapest accepted point found, or ``(None, inf)``."""
    z0 = np.asarray(z0, dtype=float)
    cands = _candidates(space, emb, z0, lb, ub, can_change)
    if not cands:
        return None, math.inf
    score = _scorer(emb, z0)
    base = emb.score(z0)[0]
    single = _apply(z0, cands)
    gain1 = score(single) - base
    cost1 = distance.aggregate(deltas(space, z0, single))
    singles = _promising(gain1, cost1)
    level = [((i,), [c]) for i, c in enumerate(cands)]
    best, best_obj = None, math.inf
    for size in range(1, 4):
        if Tmax is not None and size > Tmax:
            break
        Z = np.repeat(z0[None, :], len(level), axis=0)
        for r, (_, changes) in enumerate(level):
            for _, cols, vals in changes:
                Z[r, cols] = vals
        s = score(Z)
        obj = distance.aggregate(deltas(space, z0, Z))
        ok = s >= score_lo
        if ok.any():
            k = int(np.flatnonzero(ok)[np.argmin(obj[ok])])
            if obj[k] < best_obj:
                best, best_obj = Z[k], float(obj[k])
        # a further change only adds cost: extend the rejected combinations still cheaper
        # than the best accepted one, the most promising first
        alive = np.flatnonzero(~ok & (obj < best_obj))
        if not len(alive):
            break
        top = alive[_promising(s[alive] - base, obj[alive])]
        k_context = max(1, min(CONTEXT, CONTEXT_ROWS // max(len(cands), 1)))
        context = set(alive[_promising(s[alive] - base, obj[alive], k_context)].tolist())
        nxt, seen = [], set()
        for r in top:
            ids, changes = level[r]
            used = {ch[0] for ch in changes}
            for j in (range(len(cands)) if r in context else singles):
                if cands[j][0] in used or max(obj[r], cost1[j]) >= best_obj:
                    continue
                key = tuple(sorted(ids + (int(j),)))
                if key not in seen:
                    seen.add(key)
                    nxt.append((key, changes + [cands[j]]))
        if not nxt:
            break
        level = nxt
    if best is None:
        best, best_obj = _greedy(space, score, z0, cands, distance, score_lo, Tmax)
    if best is None:
        return None, math.inf
    return _polish(space, score, z0, cands, distance, score_lo, best, best_obj)


def _promising(gain, cost, k=BEAM):
    """Indices of the ``k`` largest score gains and the ``k`` largest gains per unit of
    distance (cheap small steps towards acceptance), without repetition."""
    by_gain = np.argsort(-gain, kind="stable")[:k]
    by_ratio = np.argsort(-gain / np.maximum(cost, 1e-12), kind="stable")[:k]
    return list(dict.fromkeys(int(i) for i in np.concatenate([by_gain, by_ratio])))


def _polish(space, score, z0, cands, distance, score_lo, z, obj):
    """Coordinate descent on an accepted point: move one feature at a time to its cheapest
    candidate value (or back to :math:`x^0`) that keeps the point accepted, until no move
    lowers the distance. ``(point, objective)``."""
    by_feature = {}
    for l, cols, vals in cands:
        by_feature.setdefault(l, (cols, []))[1].append(vals)
    improved = True
    while improved:
        improved = False
        for cols, vals in by_feature.values():
            Z = np.repeat(z[None, :], len(vals) + 1, axis=0)
            Z[:-1][:, cols] = np.array(vals)
            Z[-1, cols] = z0[cols]
            o = distance.aggregate(deltas(space, z0, Z))
            o[score(Z) < score_lo] = np.inf
            k = int(np.argmin(o))
            if o[k] < obj - 1e-12 * max(1.0, abs(obj)):
                z, obj, improved = Z[k], float(o[k]), True
    return z, obj


def _greedy(space, score, z0, cands, distance, score_lo, Tmax):
    """Apply the single change with the largest score gain (one per feature) until the
    point is accepted, then undo every change that is not needed (cheapest point first).
    ``(point, objective)`` or ``(None, inf)``."""
    z, used = z0.copy(), []
    limit = len(space) if Tmax is None else Tmax
    while len(used) < limit:
        free = [j for j, c in enumerate(cands) if c[0] not in {cands[u][0] for u in used}]
        if not free:
            break
        Z = np.repeat(z[None, :], len(free), axis=0)
        for r, j in enumerate(free):
            Z[r, cands[j][1]] = cands[j][2]
        s = score(Z)
        k = int(np.argmax(s))
        used.append(free[k])
        z = Z[k]
        if s[k] >= score_lo:
            break
    else:
        return None, math.inf
    if score(z[None, :])[0] < score_lo:
        return None, math.inf
    for u in sorted(used, key=lambda j: -float(distance.aggregate(deltas(space, z0, _apply(z0, [cands[j]])))[0])):
        trial = z.copy()
        trial[cands[u][1]] = z0[cands[u][1]]
        if score(trial[None, :])[0] >= score_lo:
            z = trial
    return z, float(distance.aggregate(deltas(space, z0, z[None, :]))[0])


def _apply(z0, cands):
    Z = np.repeat(z0[None, :], len(cands), axis=0)
    for r, (_, cols, vals) in enumerate(cands):
        Z[r, cols] = vals
    return Z


def best_single(space, emb, z0, lb, ub, can_change, distance, score_lo):
    """The cheapest accepted single-feature change: ``(point, objective)`` or ``(None, inf)``.
    Exact among single changes: along one feature the nearest point of every cell of the
    ensemble's thresholds is a candidate (:func:`_candidates`)."""
    cands = _candidates(space, emb, np.asarray(z0, dtype=float), lb, ub, can_change)
    if not cands:
        return None, math.inf
    Z = _apply(z0, cands)
    ok = _scorer(emb, np.asarray(z0, dtype=float))(Z) >= score_lo
    if not ok.any():
        return None, math.inf
    obj = distance.aggregate(deltas(space, z0, Z[ok]))
    k = int(np.argmin(obj))
    return Z[ok][k], float(obj[k])


def search(emb, problem):
    """Steps 1 and 2 (module docstring) for ``problem``
    (:class:`~groupcf.embeddings.search.SearchProblem`): ``(stats, point, box)`` — the
    statistics (``upper_bound``: the point's objective, ``inf`` when none was found;
    ``single_optimal``: the point is the proven optimum), the accepted point (expanded,
    ``None`` when none was found) and the radius box to build the MIP over (``None``
    without one)."""
    p = problem
    z0 = np.asarray(p.z0, dtype=float)
    point, obj = upper_bound(p.space, emb, z0, p.lb, p.ub, p.can_change, p.distance, p.strict, Tmax=p.Tmax)
    stats = {"upper_bound": obj}
    if point is None or not (p.radius and p.single):
        return stats, point, None
    k = max_changes(p.space, p.distance, obj)
    if k is not None and k <= 1:
        # at most one feature changes in any solution as good: the exact scan of every
        # single change (at the MIP's own score bound) is the optimum
        single, s_obj = best_single(p.space, emb, z0, p.lb, p.ub, p.can_change, p.distance, p.score_lo)
        if single is not None and s_obj <= obj:
            stats.update(upper_bound=s_obj, single_optimal=True)
            point, obj = single, s_obj
    box = emb.radius(p, obj)
    stats["fixed_features"] = int(np.sum(p.can_change & ~box.can_change))
    return stats, point, box


def start(problem, mip, stats, point) -> None:
    """Step 3: ``point`` as the MIP start of ``mip`` (a built NearestCounterfactual), and
    the cardinality cut of the radius (none for a proven single change: the solver is not
    run)."""
    if point is None or stats.get("single_optimal"):
        return
    mip.start_from(point)
    k = max_changes(problem.space, problem.distance, stats["upper_bound"]) \
        if (problem.radius and problem.single) else None
    if k is not None and k < len(problem.space):      # sum f <= k
        mip.backend.add_row(mip.f, np.ones(len(mip.f)), hi=float(k))
