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

from ..formulations.distances import box_distance, parse_distance
from ..utils import Deadline
from .decode import integer_past
from .radius import category_changes, deltas, max_changes, radius_box
from .tree_pairs import best_combination

#: share of the time left that the exact scans of three and more changed features may take
SCAN_SHARE = 0.6
#: changes kept per level of the pair / triple search (by score gain, and by gain per distance)
BEAM = 20
#: of those, combinations extended by *every* single change (scored in their context by
#: sweeps along each column: a change that gains little alone may complete a combination)
CONTEXT = 8


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
                    v = integer_past(f, t, rng, up=bool(z0[c] <= t))
                if lb[c] <= v <= ub[c] and v != z0[c]:
                    out.append((l, cols, np.array([v])))
    return out


def single_scores(emb, score, z, cands, deadline=None) -> np.ndarray:
    """Scores of ``z`` with each single change of ``cands`` applied: one sweep along the
    column (:meth:`~groupcf.embeddings.base.Embedding.column_scores`) per one-column
    feature, ``score`` on the rows for the others (one-hot). When ``deadline``
    (:class:`~groupcf.utils.Deadline`) passes, the candidates not yet scored get NaN
    (never accepted)."""
    out = np.full(len(cands), np.nan)
    by_col: dict[int, list[int]] = {}
    rest: list[int] = []
    for i, (_, cols, _) in enumerate(cands):
        if len(cols) == 1:
            by_col.setdefault(int(cols[0]), []).append(i)
        else:
            rest.append(i)
    for c, idx in by_col.items():
        if deadline is not None and deadline.passed:
            return out
        out[idx] = emb.column_scores(z, c, [float(cands[i][2][0]) for i in idx])
    if rest and not (deadline is not None and deadline.passed):
        Z = np.repeat(np.asarray(z, dtype=float)[None, :], len(rest), axis=0)
        for r, i in enumerate(rest):
            Z[r, cands[i][1]] = cands[i][2]
        out[rest] = score(Z)
    return out


def single_changes(space, emb, z0, lb, ub, can_change, deadline=None):
    """``(cands, scores)``: every single change (:func:`_candidates`) and its score (NaN
    for those not scored when ``deadline`` passed)."""
    z0 = np.asarray(z0, dtype=float)
    cands = _candidates(space, emb, z0, lb, ub, can_change)
    return cands, single_scores(emb, _scorer(emb, z0), z0, cands, deadline)


def _out(deadline) -> bool:
    return deadline is not None and deadline.passed


def upper_bound(space, emb, z0, lb, ub, can_change, distance, score_lo, Tmax=None, single=None, deadline=None):
    """``(point, objective)`` of the cheapest accepted point found, or ``(None, inf)``;
    ``single``: :func:`single_changes`, when already computed. When ``deadline`` passes,
    the best point found so far (each level, context extension, greedy step and polish
    pass checks it)."""
    z0 = np.asarray(z0, dtype=float)
    cands, s1 = single if single is not None else single_changes(space, emb, z0, lb, ub, can_change)
    if not cands:
        return None, math.inf
    score = _scorer(emb, z0)
    base = emb.score(z0)[0]
    gain1 = s1 - base
    cost1 = distance.aggregate(deltas(space, z0, _apply(z0, cands)))
    singles = _promising(gain1, cost1)
    feat_of = np.array([c[0] for c in cands])
    level, level_s = [((i,), [c]) for i, c in enumerate(cands)], list(s1)
    best, best_obj = None, math.inf
    for size in range(1, 4):
        if (Tmax is not None and size > Tmax) or (size > 1 and _out(deadline)):
            break
        Z = np.repeat(z0[None, :], len(level), axis=0)
        for r, (_, changes) in enumerate(level):
            for _, cols, vals in changes:
                Z[r, cols] = vals
        if size == 1:
            s = s1
        else:                  # context extensions come scored (sweeps); the rest by rows
            s = np.asarray(level_s, dtype=float)
            todo = np.flatnonzero(np.isnan(s))
            if len(todo):
                s[todo] = score(Z[todo])
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
        context = set(alive[_promising(s[alive] - base, obj[alive], CONTEXT)].tolist())
        nxt, nxt_s, seen = [], [], set()
        for r in top:
            if _out(deadline):
                break
            ids, changes = level[r]
            used = {ch[0] for ch in changes}
            # in context: every single change, scored by sweeps along the columns from Z[r];
            # kept: the cheapest accepted and the most promising rejected combinations
            s_r = single_scores(emb, score, Z[r], cands) if r in context else None
            for j in (_context_kept(s_r, feat_of, used, obj[r], cost1, best_obj, score_lo, base)
                      if s_r is not None else singles):
                if cands[j][0] in used or max(obj[r], cost1[j]) >= best_obj:
                    continue
                key = tuple(sorted(ids + (int(j),)))
                if key not in seen:
                    seen.add(key)
                    nxt.append((key, changes + [cands[j]]))
                    nxt_s.append(np.nan if s_r is None else s_r[j])
        if not nxt:
            break
        level, level_s = nxt, nxt_s
    if best is None:
        best, best_obj = _greedy(space, score, z0, cands, distance, score_lo, Tmax, deadline)
    if best is None:
        return None, math.inf
    return _polish(space, emb, score, z0, cands, distance, score_lo, best, best_obj, deadline)


def _context_kept(s_r, feat_of, used, obj_r, cost1, best_obj, score_lo, base) -> list[int]:
    """The single changes that extend a combination in context (scores ``s_r``): of those
    on another feature and still cheaper than the best, the :data:`BEAM` cheapest
    accepted and the most promising rejected (:func:`_promising`), the combination's cost
    estimated as its own plus the change's."""
    js = np.flatnonzero(~np.isin(feat_of, list(used)) & (np.maximum(obj_r, cost1) < best_obj))
    if not len(js):
        return []
    est = obj_r + cost1[js]
    acc = s_r[js] >= score_lo
    kept = list(js[acc][np.argsort(est[acc], kind="stable")[:BEAM]])
    rej = js[~acc]
    if len(rej):
        kept += list(rej[_promising(s_r[rej] - base, est[~acc])])
    return [int(j) for j in kept]


def _promising(gain, cost, k=BEAM):
    """Indices of the ``k`` largest score gains and the ``k`` largest gains per unit of
    distance (cheap small steps towards acceptance), without repetition."""
    by_gain = np.argsort(-gain, kind="stable")[:k]
    by_ratio = np.argsort(-gain / np.maximum(cost, 1e-12), kind="stable")[:k]
    return list(dict.fromkeys(int(i) for i in np.concatenate([by_gain, by_ratio])))


def _polish(space, emb, score, z0, cands, distance, score_lo, z, obj, deadline=None):
    """Coordinate descent on an accepted point: move one feature at a time to its cheapest
    candidate value (or back to :math:`x^0`) that keeps the point accepted, until no move
    lowers the distance. ``(point, objective)``."""
    by_feature = {}
    for l, cols, vals in cands:
        by_feature.setdefault(l, (cols, []))[1].append(vals)
    improved = True
    while improved and not _out(deadline):
        improved = False
        for cols, vals in by_feature.values():
            Z = np.repeat(z[None, :], len(vals) + 1, axis=0)
            Z[:-1][:, cols] = np.array(vals)
            Z[-1, cols] = z0[cols]
            o = distance.aggregate(deltas(space, z0, Z))
            s = emb.column_scores(z, int(cols[0]), Z[:, cols[0]]) if len(cols) == 1 else score(Z)
            o[s < score_lo] = np.inf
            k = int(np.argmin(o))
            if o[k] < obj - 1e-12 * max(1.0, abs(obj)):
                z, obj, improved = Z[k], float(o[k]), True
    return z, obj


def _greedy(space, score, z0, cands, distance, score_lo, Tmax, deadline=None):
    """Apply the single change with the largest score gain (one per feature) until the
    point is accepted, then undo every change that is not needed (cheapest point first).
    ``(point, objective)`` or ``(None, inf)``."""
    z, used = z0.copy(), []
    limit = len(space) if Tmax is None else Tmax
    while len(used) < limit:
        if _out(deadline):
            return None, math.inf
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


def best_single(space, emb, z0, lb, ub, can_change, distance, score_lo, single=None):
    """The cheapest accepted single-feature change: ``(point, objective)`` or ``(None, inf)``.
    Exact among single changes: along one feature the nearest point of every cell of the
    ensemble's thresholds is a candidate (:func:`_candidates`); ``single``: :func:`single_changes`,
    when already computed."""
    cands, s1 = single if single is not None else single_changes(space, emb, z0, lb, ub, can_change)
    if not cands:
        return None, math.inf
    Z = _apply(z0, cands)
    ok = s1 >= score_lo
    if not ok.any():
        return None, math.inf
    obj = distance.aggregate(deltas(space, z0, Z[ok]))
    k = int(np.argmin(obj))
    return Z[ok][k], float(obj[k])


def search(emb, problem):
    """Steps 1 and 2 (module docstring) for ``problem``
    (:class:`~groupcf.embeddings.search.SearchProblem`): ``(stats, point, box)`` — the
    statistics (``upper_bound``: the point's objective, ``inf`` when none was found;
    ``single_optimal``: the point is the proven optimum; ``scan_lower_bound``: the
    cheapest single change, accepted or not, a lower bound of every counterfactual's
    distance since one must cross a split threshold; ``time_limit_reached``: the
    problem's deadline passed during the search, which then returned its best point so
    far), the accepted point (expanded, ``None`` when none was found) and the radius box to
    build the MIP over (``None`` without one)."""
    p = problem
    if p.out_of_time:
        return {"upper_bound": math.inf, "time_limit_reached": True}, None, None
    z0 = np.asarray(p.z0, dtype=float)
    one = single_changes(p.space, emb, z0, p.lb, p.ub, p.can_change, p.deadline)
    complete = not np.isnan(one[1]).any()
    base: dict = {}
    if one[0]:
        base["scan_lower_bound"] = float(distance_floor(p.space, z0, one[0], p.distance))
    if p.radius and p.single and complete:
        # the exact scan of every single change (at the MIP's own score bound) first: when
        # its best point allows at most one changed feature, it is the optimum
        single, s_obj = best_single(p.space, emb, z0, p.lb, p.ub, p.can_change, p.distance, p.score_lo,
                                    single=one)
        k = max_changes(p.space, p.distance, s_obj) if single is not None else None
        if k is not None and k <= 1:
            stats = {**base, "upper_bound": s_obj, "single_optimal": True}
            box = emb.radius(p, s_obj)
            stats["fixed_features"] = int(np.sum(p.can_change & ~box.can_change))
            return stats, single, box
        if k is not None and p.pairs and (p.Tmax is None or p.Tmax >= 2):
            # the exact scans settle every point with <= 2 changes from the single's bound (no
            # beam: the MIP searches the solutions with more changes)
            stats = {**base, "upper_bound": s_obj}
            point, obj = _settle_pairs(p, emb, z0, one, single, s_obj, stats)
            return stats, point, _box(p, emb, z0, obj, stats)
    pairs = p.pairs and p.radius and p.single and complete and (p.Tmax is None or p.Tmax >= 2)
    point, obj = upper_bound(p.space, emb, z0, p.lb, p.ub, p.can_change, p.distance, p.strict, Tmax=p.Tmax,
                             single=one, deadline=p.deadline)
    stats = {**base, "upper_bound": obj}
    if p.out_of_time:
        stats["time_limit_reached"] = True
    if point is None or not (p.radius and p.single):
        return stats, point, None
    k = max_changes(p.space, p.distance, obj)
    if k is not None and k <= 1 and complete:
        # at most one feature changes in any solution as good: the exact single-change scan
        # is the optimum
        single, s_obj = best_single(p.space, emb, z0, p.lb, p.ub, p.can_change, p.distance, p.score_lo,
                                    single=one)
        if single is not None and s_obj <= obj:
            stats.update(upper_bound=s_obj, single_optimal=True)
            point, obj = single, s_obj
    elif k is not None and pairs:
        point, obj = _settle_pairs(p, emb, z0, one, point, obj, stats)
    return stats, point, _box(p, emb, z0, obj, stats)


def _box(p, emb, z0, obj, stats):
    """The radius of the solutions better than ``obj`` (``stats["fixed_features"]``: the
    features it fixes); when every better solution changes at least ``min_changes``
    features, the box of those."""
    if stats.get("min_changes", 1) > 1:
        box = radius_box(p.space, p.distance, obj, z0, p.lb, p.ub, p.can_change, min_changes=stats["min_changes"])
    else:
        box = emb.radius(p, obj)
    stats["fixed_features"] = int(np.sum(p.can_change & ~box.can_change))
    return box


def _settle_pairs(p, emb, z0, one, point, obj, stats):
    """With the exact scans of single changes and of 2, 3, ... changed features
    (:mod:`groupcf.single.tree_pairs`; from 3 on within :data:`SCAN_SHARE` of the time left,
    most combinations dropped by their score bound), settle every point with at most ``s``
    changes for ``s`` as far as they complete: the best of them improves the incumbent; if
    at most ``s`` features can change in a better solution, the incumbent is the proven
    optimum (``single_optimal``), else every better solution changes more
    (``min_changes``). ``(point, objective)``."""
    single, s_obj = best_single(p.space, emb, z0, p.lb, p.ub, p.can_change, p.distance, p.score_lo, single=one)
    if single is not None and s_obj < obj:
        point, obj = single, s_obj
    score = _scorer(emb, z0)
    deadline = p.deadline
    for size in range(2, len(p.space) + 1):
        if p.Tmax is not None and size > p.Tmax:
            break
        if size >= 3:
            # three changes and more within a share of the time left (the MIP searches what
            # they leave): each size settled raises the MIP's min_changes; all sizes up to
            # the l0 weight's max_changes settled prove the incumbent optimal. Without an l0
            # weight, none; without a time limit, only triples that prove it (k = 3)
            k = max_changes(p.space, p.distance, obj)
            if k is None or (p.deadline is None and k != 3):
                break
        if size == 3:
            left = None if p.deadline is None else p.deadline.left()
            deadline = None if left is None else Deadline(SCAN_SHARE * left)
        box = radius_box(p.space, p.distance, obj, z0, p.lb, p.ub, p.can_change, min_changes=size)
        found, f_obj, done = best_combination(p.space, emb, score, z0, one[0], box.lb, box.ub, box.can_change,
                                              p.distance, p.score_lo, obj, size, deadline)
        if found is not None and f_obj < obj:
            point, obj = found, f_obj
            stats[f"improved_by_{size}"] = True
        stats["upper_bound"] = obj
        if not done or point is None:
            return point, obj
        k = max_changes(p.space, p.distance, obj)
        if k is not None and (k <= size or (p.Tmax is not None and p.Tmax <= size)):
            stats["single_optimal"] = stats["scan_optimal"] = True
            stats.pop("min_changes", None)
            return point, obj
        stats["min_changes"] = size + 1
    return point, obj


def pruned(emb, problem, stats, box):
    """The ensemble the MIP is built on: folded over the radius box without the leaves
    farther than the incumbent's objective :math:`U`
    (:meth:`~groupcf.embeddings.base.Embedding.prune`), each leaf's distance the
    :func:`~groupcf.formulations.distances.box_distance` of its cell plus, when every
    better solution changes at least ``min_changes`` features, :math:`w_0/|T|` for each of
    those the cell does not force. ``None`` (the model itself) without a radius or for a
    proven point. The MIP then needs the cutoff ``objective <= U`` (:func:`start`)."""
    if box is None or stats.get("single_optimal") or not problem.prune or _short(problem.deadline):
        return None
    p, z0 = problem, np.asarray(problem.z0, dtype=float)
    m = stats.get("min_changes", 1)
    n = max(len(p.space), 1)
    l0_only = parse_distance("l0")

    def cell_distance(lo, hi):
        d = box_distance(p.space, p.distance, z0, box.can_change, lo, hi)
        if m > 1 and p.distance.l0 > 0:
            forced = np.rint(n * box_distance(p.space, l0_only, z0, box.can_change, lo, hi))
            d = d + p.distance.l0 / n * np.maximum(m - forced, 0)
        return d
    out = emb.prune(box.lb, box.ub, cell_distance, float(stats["upper_bound"]))
    stats["pruned"] = out is not emb
    return out if out is not emb else None


def _short(deadline) -> bool:
    """Too little time left to build a MIP (:data:`groupcf.single.mace.MIN_MIP_SHARE`)."""
    from .mace import short_of_time
    return deadline is not None and (deadline.passed or short_of_time(deadline))


def distance_floor(space, z0, cands, distance) -> float:
    """The cheapest of the single changes ``cands`` (:func:`_candidates`), accepted or not:
    a lower bound of the distance of every counterfactual. A point the model scores
    differently from ``z0`` reaches another leaf in some tree, so it crosses a split
    threshold on some feature (or changes a category); restricted to that feature alone it
    costs at least the nearest such crossing, one of ``cands``, and the distance (a sum of
    per-feature terms and a max) only grows with more changed features."""
    if not cands:
        return math.inf
    by_feature: dict[int, list[int]] = {}
    for i, c in enumerate(cands):
        by_feature.setdefault(c[0], []).append(i)
    rows = []
    for idx in by_feature.values():
        if len(cands[idx[0]][1]) == 1:          # one column: its nearest value costs least
            c = int(cands[idx[0]][1][0])
            v = np.array([cands[i][2][0] for i in idx])
            rows.append(cands[idx[int(np.argmin(np.abs(v - z0[c])))]])
        else:
            rows.extend(cands[i] for i in idx)
    return float(distance.aggregate(deltas(space, z0, _apply(z0, rows))).min())


def start(problem, mip, stats, point) -> None:
    """Step 3: ``point`` as the MIP start of ``mip`` (a built NearestCounterfactual), and
    the cardinality cut of the radius (none for a proven single change: the solver is not
    run). When every better solution changes at least ``min_changes`` features (the pair
    scan settled the others), the MIP searches only those — ``sum f >= min_changes`` and the
    cutoff ``objective <= U`` — and gets no start (``point`` changes fewer): its
    infeasibility proves ``point`` optimal (``stats["cutoff"]``)."""
    if point is None or stats.get("single_optimal"):
        return
    m = stats.get("min_changes", 1)
    if m <= 1:
        mip.start_from(point)
    k = max_changes(problem.space, problem.distance, stats["upper_bound"]) \
        if (problem.radius and problem.single) else None
    if k is not None and k < len(problem.space):      # sum f <= k
        mip.backend.add_row(mip.f, np.ones(len(mip.f)), hi=float(k))
    if m > 1:
        mip.backend.add_row(mip.f, np.ones(len(mip.f)), lo=float(m))
        stats["cutoff"] = True
    if m > 1 or stats.get("pruned"):      # objective <= U (a pruned ensemble is exact only there)
        scale, u = mip.objective_scale, float(stats["upper_bound"])
        mip.backend.add_row(mip.objective_idx, mip.objective_coefs * scale,
                            hi=u * scale + 1e-7 * max(1.0, abs(u * scale)))
