r"""MACE on tree ensembles: the exact cheapest change of two features (a numpy scan).

Along one feature the score is constant between consecutive split thresholds, so the
single changes of :func:`groupcf.single.tree_bound._candidates` (the nearest point of
every other cell, every other category) and the instance's own value cover every cell.
For two features :math:`a, b` the cells of the pair are the products of those cells, and
the nearest point of a product cell is the pair of the nearest points (MACE's distance is
a sum of per-feature terms plus :math:`w_\infty` times the largest, each growing with
the move). So the cheapest accepted point changing exactly :math:`a` and :math:`b` is the
cheapest accepted entry of the score grid over their candidates
(:meth:`~groupcf.embeddings.base.Embedding.pair_scores`: one walk of the leaves reachable
when the two columns vary; one column sweep per category of a one-hot feature; scored
rows when both are one-hot) — exact.

:func:`best_pair` scans every pair that can beat a bound :math:`U` (only candidates whose
own cost plus the other feature's cheapest one stays below :math:`U`). With the exact
single-change scan it settles every point with at most two changes: when an l0 weight
limits any solution better than :math:`U` to two changed features, the cheaper of the two
scans is the optimum; otherwise every better solution changes at least three features —
MACE's MIP then searches only those (:mod:`groupcf.single.tree_bound`).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..formulations.distances import CHANGE_TOL
from .radius import deltas

#: largest grid scored at once (cells); a larger one is scanned in slabs of about this size
MAX_CELLS = 2_000_000
#: a grid is split in two (and each half bounded) at most this many times ...
SPLITS = 6
#: ... while it has more cells than this
MIN_SPLIT = 20_000


def _options(space, z0, cands, lb, ub, can_change):
    """Per feature that may change within ``[lb, ub]``: ``(columns, values (m, |cols|),
    per-feature distances (m,))`` of its candidate changes."""
    by_feature: dict[int, list[int]] = {}
    for i, c in enumerate(cands):
        if can_change[c[0]]:
            by_feature.setdefault(c[0], []).append(i)
    out = {}
    for l, idx in by_feature.items():
        cols = np.asarray(cands[idx[0]][1])
        V = np.array([cands[i][2] for i in idx], dtype=float).reshape(len(idx), len(cols))
        lo, hi = lb[cols] - 1e-12, ub[cols] + 1e-12
        ok = np.all((lo <= V) & (hi >= V), axis=1)
        if not ok.any():
            continue
        V = V[ok]
        Z = np.repeat(z0[None, :], len(V), axis=0)
        Z[:, cols] = V
        out[l] = (cols, V, deltas(space, z0, Z)[:, l])
    return out


def _grid(emb, score, z0, feats):
    """Scores of ``z0`` with each feature of ``feats`` (``(columns, values, ...)``) set to
    each of its values: shape ``(m_1, ..., m_k)``. One-column features are swept together
    (:meth:`~groupcf.embeddings.base.Embedding.grid_scores`), once per combination of the
    one-hot features' values; only one-hot features: the rows are scored."""
    k = len(feats)
    shape = tuple(len(f[1]) for f in feats)
    single = [j for j in range(k) if len(feats[j][0]) == 1]
    multi = [j for j in range(k) if len(feats[j][0]) > 1]
    combos = list(itertools.product(*[range(shape[j]) for j in multi]))
    if not single:
        Z = np.repeat(z0[None, :], len(combos), axis=0)
        for r, combo in enumerate(combos):
            for j, i in zip(multi, combo):
                Z[r, feats[j][0]] = feats[j][1][i]
        return score(Z).reshape(shape)
    out = np.empty(shape)
    for combo in combos:
        z = z0.copy()
        for j, i in zip(multi, combo):
            z[feats[j][0]] = feats[j][1][i]
        g = emb.grid_scores(z, [int(feats[j][0][0]) for j in single], [feats[j][1][:, 0] for j in single])
        index: list = [slice(None)] * k
        for j, i in zip(multi, combo):
            index[j] = i
        out[tuple(index)] = g                  # (the swept axes keep their order)
    return out


def best_combination(space, emb, score, z0, cands, lb, ub, can_change, distance, score_lo, bound, size,
                     deadline=None):
    """The cheapest point changing exactly ``size`` features that the ensemble accepts
    (``score >= score_lo``) and costs less than ``bound``: ``(point, objective, complete)``
    (``(None, inf, complete)`` when none); ``complete`` is false when ``deadline`` passed
    before every combination was scanned, or a combination's grid without its longest axis
    exceeded :data:`MAX_CELLS` (then the result is only an upper bound).

    A grid over more than :data:`MAX_CELLS` cells is scanned in slabs along its longest
    axis, that feature's candidates by increasing cost; the slabs left once one costs at
    least the incumbent are skipped (they cannot beat it), so the scan stays exact."""
    z0 = np.asarray(z0, dtype=float)
    opts = _options(space, z0, cands, lb, ub, can_change)
    n = max(len(space), 1)
    w0, w1, winf = distance.l0 / n, distance.l1 / n, distance.linf
    sep = {l: w0 * (D > CHANGE_TOL) + w1 * D for l, (_, _, D) in opts.items()}   # separable part
    cheapest = {l: float(np.min(c)) for l, c in sep.items()}     # a combination costs at least the sum
    feats = sorted(opts, key=lambda l: cheapest[l])
    best, best_obj, complete = None, float(bound), True
    for combo in _cheap_combinations(feats, [cheapest[l] for l in feats], size,
                                     lambda: best_obj):  # noqa: B023 (the current incumbent)
        floor = sum(cheapest[l] for l in combo)
        if deadline is not None and deadline.passed:
            return best, (best_obj if best is not None else math.inf), False
        keep = [np.flatnonzero(sep[l] + floor - cheapest[l] < best_obj) for l in combo]
        if any(len(kp) == 0 for kp in keep):
            continue
        keep = _representatives(emb, z0, combo, keep, opts)
        # (late binding intended: each part is bounded below the incumbent of its time)
        for block in _blocks(emb, z0, combo, keep, opts, sep, lambda: best_obj, score_lo, SPLITS):  # noqa: B023
            a = int(np.argmax([len(kp) for kp in block]))          # slabs along the longest axis
            la, others = combo[a], [(l, kp) for j, (l, kp) in enumerate(zip(combo, block)) if j != a]
            first = block[a][np.argsort(sep[la][block[a]], kind="stable")]      # cheapest first
            rest = math.prod(len(kp) for _, kp in others)
            if rest > MAX_CELLS:
                complete = False
                continue
            step = max(1, MAX_CELLS // max(rest, 1))
            for lo in range(0, len(first), step):
                slab = first[lo:lo + step]
                if sep[la][slab[0]] + floor - cheapest[la] >= best_obj:
                    break                                  # this slab and the later ones cost more
                if deadline is not None and deadline.passed:
                    return best, (best_obj if best is not None else math.inf), False
                found = _scan(emb, score, z0, [(la, slab)] + others, opts, sep, winf, score_lo, best_obj)
                if found is not None:
                    best, best_obj = found
    if best is None:
        return None, math.inf, complete
    return best, float(distance.aggregate(deltas(space, z0, best[None, :]))[0]), complete


def _representatives(emb, z0, combo, keep, opts):
    """``keep`` (per feature of ``combo``, its candidates' indices) with one candidate per
    class of equal scores: along a one-column feature, the values between two consecutive
    edges of the leaves reachable when the combination's columns vary
    (:meth:`~groupcf.embeddings.base.Embedding.grid_edges`) score the same whatever the
    other features of the combination are set to, and the one nearest the instance costs
    least with every other change (MACE's distance grows with each feature's move), so it
    is the only one that can be the cheapest accepted point of the grid."""
    cols = [int(c) for l in combo for c in opts[l][0]]
    edges = emb.grid_edges(z0, cols)
    if edges is None:
        return keep
    out, pos = [], 0
    for l, kp in zip(combo, keep):
        if len(opts[l][0]) == 1:
            cls = np.searchsorted(edges[pos], opts[l][1][kp, 0], side="left")
            order = np.lexsort((opts[l][2][kp], cls))          # by class, then by distance
            first = np.ones(len(order), dtype=bool)
            first[1:] = cls[order][1:] != cls[order][:-1]
            kp = np.sort(kp[order[first]])
        out.append(kp)
        pos += len(opts[l][0])
    return out


def _cheap_combinations(feats, cost, size, budget, start=0, prefix=(), spent=0.0):
    """The combinations of ``size`` of ``feats`` (sorted by ``cost``, increasing) whose
    summed costs are below ``budget()``, in lexicographic order: a prefix is extended only
    while it plus the cheapest completion (the next features in order) stays below it."""
    need = size - len(prefix)
    if need == 0:
        yield prefix
        return
    for i in range(start, len(feats) - need + 1):
        if spent + sum(cost[i:i + need]) >= budget():
            return                              # later features cost at least as much
        yield from _cheap_combinations(feats, cost, size, budget, i + 1, prefix + (feats[i],), spent + cost[i])


def _blocks(emb, z0, combo, keep, opts, sep, budget, score_lo, depth):
    """The sub-grids of a combination's grid (``keep``: per feature its candidates) that
    may hold an accepted point costing less than ``budget()``: the grid is dropped when its
    bound is below ``score_lo`` (:func:`_out_of_reach`), else, ``depth`` times at most and
    while it has more than :data:`MIN_SPLIT` cells, split in two along its longest axis (its
    candidates by value) and each half bounded the same way. The halves partition the
    grid, so the cheapest accepted point below the budget is in a block yielded."""
    if _out_of_reach(emb, z0, combo, keep, opts, sep, budget(), score_lo):
        return
    if depth <= 0 or math.prod(len(kp) for kp in keep) <= MIN_SPLIT:
        yield keep
        return
    j = int(np.argmax([len(kp) for kp in keep]))
    by_value = keep[j][np.argsort(opts[combo[j]][1][keep[j], 0], kind="stable")]
    half = len(by_value) // 2
    for part in (by_value[:half], by_value[half:]):
        sub = list(keep)
        sub[j] = np.sort(part)
        yield from _blocks(emb, z0, combo, sub, opts, sep, budget, score_lo, depth - 1)


def _out_of_reach(emb, z0, combo, keep, opts, sep, best_obj, score_lo):
    """Whether no point of the combination's grid (``keep``: per feature its candidates)
    costing less than ``best_obj`` can reach ``score_lo``: the embedding's
    :meth:`~groupcf.embeddings.base.Embedding.grid_upper` over the separable costs (a
    lower bound of each point's cost) is below it, with a slack for the order of the
    sums."""
    groups = [(opts[l][0], opts[l][1][kp], sep[l][kp]) for l, kp in zip(combo, keep)]
    ub = emb.grid_upper(z0, groups, best_obj)
    return ub is not None and ub < score_lo - 1e-9 * max(1.0, abs(score_lo))


def _scan(emb, score, z0, chosen, opts, sep, winf, score_lo, best_obj):
    """The cheapest accepted point of one grid (``chosen``: per feature its candidates'
    indices) costing less than ``best_obj``: ``(point, cost)``, or ``None``."""
    size = len(chosen)
    parts = [(opts[l][0], opts[l][1][kp], opts[l][2][kp]) for l, kp in chosen]
    cost = np.zeros(tuple(len(kp) for _, kp in chosen))
    worst = np.zeros(cost.shape)
    for j, (l, kp) in enumerate(chosen):
        shape = [1] * size
        shape[j] = len(kp)
        cost = cost + sep[l][kp].reshape(shape)
        worst = np.maximum(worst, parts[j][2].reshape(shape))
    cost = cost + winf * worst
    cheap = cost < best_obj
    if not cheap.any():
        return None
    ok = cheap & (_grid(emb, score, z0, parts) >= score_lo)
    if not ok.any():
        return None
    at = np.unravel_index(np.argmin(np.where(ok, cost, np.inf)), cost.shape)
    point = z0.copy()
    for j, (cols, values, _) in enumerate(parts):
        point[cols] = values[at[j]]
    return point, float(cost[at])


def best_pair(space, emb, score, z0, cands, lb, ub, can_change, distance, score_lo, bound, deadline=None):
    """:func:`best_combination` of two features."""
    return best_combination(space, emb, score, z0, cands, lb, ub, can_change, distance, score_lo, bound, 2,
                            deadline)
