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

import math

import numpy as np

from ..formulations.distances import CHANGE_TOL
from .radius import deltas


def _options(space, z0, cands, lb, ub, can_change):
    """Per feature that may change within ``[lb, ub]``: ``(columns, values (m, |cols|),
    per-feature distances (m,))`` of its candidate changes."""
    by_feature: dict[int, list[int]] = {}
    for i, (l, cols, vals) in enumerate(cands):
        if can_change[l] and np.all(vals >= lb[cols] - 1e-12) and np.all(vals <= ub[cols] + 1e-12):
            by_feature.setdefault(l, []).append(i)
    if not by_feature:
        return {}
    Z = np.repeat(z0[None, :], len(cands), axis=0)
    for idx in by_feature.values():
        for i in idx:
            Z[i, cands[i][1]] = cands[i][2]
    out = {}
    for l, idx in by_feature.items():
        cols = np.asarray(cands[idx[0]][1])
        D = deltas(space, z0, Z[idx])[:, l]
        out[l] = (cols, np.array([cands[i][2] for i in idx], dtype=float).reshape(len(idx), len(cols)), D)
    return out


def _grid(emb, score, z0, a, b):
    """Scores of ``z0`` with feature ``a`` set to each of its values and ``b`` to each of
    its: ``(m_a, m_b)``."""
    (ca, va, _), (cb, vb, _) = a, b
    if len(ca) == 1 and len(cb) == 1:
        return emb.pair_scores(z0, int(ca[0]), va[:, 0], int(cb[0]), vb[:, 0])
    if len(cb) == 1:                       # one sweep along b per value of a
        out = np.empty((len(va), len(vb)))
        for i in range(len(va)):
            z = z0.copy()
            z[ca] = va[i]
            out[i] = emb.column_scores(z, int(cb[0]), vb[:, 0])
        return out
    if len(ca) == 1:
        return _grid(emb, score, z0, b, a).T
    Z = np.repeat(z0[None, :], len(va) * len(vb), axis=0)
    Z[:, ca] = np.repeat(va, len(vb), axis=0)
    Z[:, cb] = np.tile(vb, (len(va), 1))
    return score(Z).reshape(len(va), len(vb))


def best_pair(space, emb, score, z0, cands, lb, ub, can_change, distance, score_lo, bound, deadline=None):
    """The cheapest point changing exactly two features that the ensemble accepts
    (``score >= score_lo``) and costs less than ``bound``: ``(point, objective, complete)``
    (``(None, inf, complete)`` when none); ``complete`` is false when ``deadline`` passed
    before every pair was scanned (then the result is only an upper bound)."""
    z0 = np.asarray(z0, dtype=float)
    opts = _options(space, z0, cands, lb, ub, can_change)
    n = max(len(space), 1)
    w0, w1, winf = distance.l0 / n, distance.l1 / n, distance.linf
    sep = {l: w0 * (D > CHANGE_TOL) + w1 * D for l, (_, _, D) in opts.items()}   # separable part
    cheapest = {l: float(np.min(c)) for l, c in sep.items()}     # a pair costs at least the sum
    feats = sorted(opts, key=lambda l: cheapest[l])
    best, best_obj = None, float(bound)
    for ia, a in enumerate(feats):
        for b in feats[ia + 1:]:
            if cheapest[a] + cheapest[b] >= best_obj:
                continue
            if deadline is not None and deadline.passed:
                return best, (best_obj if best is not None else math.inf), False
            ka = np.flatnonzero(sep[a] + cheapest[b] < best_obj)
            kb = np.flatnonzero(sep[b] + cheapest[a] < best_obj)
            if not len(ka) or not len(kb):
                continue
            A = (opts[a][0], opts[a][1][ka], opts[a][2][ka])
            B = (opts[b][0], opts[b][1][kb], opts[b][2][kb])
            cost = sep[a][ka][:, None] + sep[b][kb][None, :] + winf * np.maximum(A[2][:, None], B[2][None, :])
            cheap = cost < best_obj
            if not cheap.any():
                continue
            accepted = _grid(emb, score, z0, A, B) >= score_lo
            ok = cheap & accepted
            if ok.any():
                i, j = np.unravel_index(np.argmin(np.where(ok, cost, np.inf)), cost.shape)
                best_obj = float(cost[i, j])
                best = z0.copy()
                best[A[0]] = A[1][i]
                best[B[0]] = B[1][j]
    if best is None:
        return None, math.inf, True
    return best, float(distance.aggregate(deltas(space, z0, best[None, :]))[0]), True
