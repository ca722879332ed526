r"""Diverse selection (Shekhar et al. 2023, §V-B2: several counterfactuals per query,
scored by their diversity, eqs. 12-13) and the greedy polish.

The swarm converges on its global best, so the cheapest valid points it visits are
near-copies of one point; picking the ``n`` cheapest (or one per k-means cluster of
them, the previous rule) returns ``n`` near-identical counterfactuals. Here the ``n``
are chosen from the whole pool (valid personal bests and every valid point visited, over
all rounds) by a greedy max-min rule that trades cost against spread.

**Distance** between two snapped points :math:`a, b` — the objective's own terms with
:math:`b` in place of the query (so :math:`d(a, x^0)` is :math:`a`'s cost, eqs. 5-6):

.. math::

    d(a, b) = \frac1n \Big( w_2 \sum_l s_l\, \delta_l(a, b)
              + w_3\, \#\{l : \delta_l(a, b) > \tau_c\} \Big)

with :math:`\delta_l` Gower's per-feature difference (|Δz| on a [0, 1]-scaled continuous
feature, 0/1 otherwise), :math:`s_l` the feature's l2 weight (1, or range / MAD with
``scale="mad"``), :math:`\tau_c` = ``change_tol``. Two points are **near-duplicates**
when :math:`\max_l \delta_l(a, b) / u_l \le \tau` (``min_separation``): no feature
differs by more than :math:`\tau` units, :math:`u_l` = 1 (its range) or, with
``scale="mad"``, the feature's MAD (the same unit for :math:`\tau_c`).

**Selection** (:func:`select_diverse`, a maximal-marginal-relevance greedy): first the
cheapest point; then repeatedly the point minimising

.. math::

    f(c) - \lambda \min_{s \in S} d(c, s)

among those that are not near-duplicates of any selected :math:`s \in S`
(:math:`\lambda` = ``w_diversity``; :math:`\lambda = 0`: the cheapest distinct points;
large :math:`\lambda`: farthest-first traversal). Fewer than ``n`` are returned when the
pool has no more separated points.

**Polish** (:func:`polish`): per counterfactual, repeatedly try undoing each of *its own*
changed features and moving each changed continuous one half-way back to the query, and
the bulk move combining every improving single move; a move is kept when the model still
accepts the point, it stays more than :math:`\tau` away from every other counterfactual,
and it lowers the same score :math:`f(c) - \lambda \min_{s \ne c} d(c, s)` (so the polish
cannot pull the set back onto one point). All candidates of a round are scored in one
model call; moves are accepted one counterfactual at a time against the others' current
positions.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .splits import back_moves


def unique_rows(Z: np.ndarray, cost: np.ndarray, cols: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``Z`` (to 9 decimals, compared on ``cols`` only if given: the
    other columns are the query's), keeping the lowest cost of each, sorted by cost."""
    if not len(Z):
        return Z, cost
    order = np.argsort(cost, kind="stable")
    K = np.round(Z[order] if cols is None else Z[order][:, cols], 9)
    keep = order[~pd.DataFrame(K).duplicated().to_numpy()]        # hashed, first (cheapest) kept
    return Z[keep], cost[keep]


def distances(box, P: np.ndarray, q: np.ndarray, w2: float, w3: float) -> tuple[np.ndarray, np.ndarray]:
    """``(d, linf)`` of each row of ``P`` (box columns) to the row ``q``: the objective's
    distance :math:`d` and the largest scaled per-feature difference (module docstring)."""
    D = box.feature_deltas(P, q)
    d = (w2 * (D @ box.scale) + w3 * (box.tol < D).sum(axis=1)) / box.n_features
    return d, box.separation(D)


def select_diverse(box, P: np.ndarray, cost: np.ndarray, n: int, params) -> np.ndarray:
    """Indices (into ``P``, box columns) of up to ``n`` mutually separated points, in
    the order picked (the cheapest first)."""
    if not len(P):
        return np.zeros(0, dtype=np.int64)
    w2, w3, lam, tol = params.w_proximity, params.w_sparsity, params.w_diversity, params.min_separation
    first = int(np.argmin(cost))
    picked = [first]
    dmin, lmin = distances(box, P, P[first], w2, w3)
    while len(picked) < n:
        score = np.where(lmin > tol, cost - lam * dmin, np.inf)
        i = int(np.argmin(score))
        if not np.isfinite(score[i]):
            break
        picked.append(i)
        d, l = distances(box, P, P[i], w2, w3)
        dmin, lmin = np.minimum(dmin, d), np.minimum(lmin, l)
    return np.asarray(picked, dtype=np.int64)


def _score_from(box, bb, P: np.ndarray, Q: np.ndarray, whose: np.ndarray) -> np.ndarray:
    """Scores of the candidates ``Q`` (box columns), each a move of the row ``P[whose]``
    on a few features: by partial evaluation from that row (:meth:`SwarmModel.score_near
    <groupcf.single.pso.model.SwarmModel.score_near>`), one call per row."""
    out = np.empty(len(Q))
    for i in np.unique(whose):
        mine = np.flatnonzero(whose == i)
        out[mine] = bb.score_near(box.full(P[i:i + 1])[0], box.full(Q[mine]))
    return out


#: fractions of the way back to the query tried per changed continuous feature and round
BACK_STEPS = (0.25, 0.5, 0.75)


def polish(box, bb, Z: np.ndarray, params, max_rounds: int = 30, splits: dict | None = None) -> np.ndarray:
    """Greedy sparsity/proximity polish of valid encoded rows ``Z`` that keeps them
    apart (module docstring); a new array, every row still accepted by ``bb`` (checked
    on the scores of the same call) and, if the input rows were, mutually separated."""
    P = Z[:, box.cols].copy()
    thr = bb.threshold
    w2, w3, lam, tol = params.w_proximity, params.w_sparsity, params.w_diversity, params.min_separation

    def cost_of(Q, p, valid):
        return box.objective(Q, p, valid, thr, params.invalid_penalty, w2, w3)

    def merit(i, Q, c):
        """Selection score of rows ``Q`` (costs ``c``) as counterfactual ``i`` against the
        others' current positions; inf where too close to one of them."""
        dmin, lmin = np.full(len(Q), np.inf), np.full(len(Q), np.inf)
        for j in range(len(P)):
            if j != i:
                d, l = distances(box, Q, P[j], w2, w3)
                dmin, lmin = np.minimum(dmin, d), np.minimum(lmin, l)
        spread = np.where(np.isfinite(dmin), dmin, 0.0)
        return np.where(lmin > tol, c - lam * spread, np.inf)

    p = bb.score(box.full(P))
    cur = cost_of(P, p, bb.accepts(p))
    live = np.ones(len(P), dtype=bool)
    cont_owner = np.zeros(len(box.active), dtype=bool)
    cont_owner[box.owner[box.cont]] = True
    col_mask = box.owner[None, :] == np.arange(len(box.active))[:, None]     # feature -> its columns
    for _ in range(max_rounds):
        rows = np.flatnonzero(live)
        if not len(rows):
            break
        D = box.feature_deltas(P[rows])
        cands: list[np.ndarray] = []
        whose_l: list[np.signedinteger[Any]] = []     # per candidate: its row and feature
        feat_l: list[np.signedinteger[Any]] = []
        for r, i in enumerate(rows):
            for a in np.flatnonzero(D[r] > 0):
                cols = col_mask[a]
                q = P[i].copy()
                q[cols] = box.p0[cols]
                cands.append(q)
                whose_l.append(i)
                feat_l.append(a)
                if cont_owner[a]:
                    for t in BACK_STEPS:
                        h = P[i].copy()
                        h[cols] = P[i, cols] + t * (box.p0[cols] - P[i, cols])
                        cands.append(h)
                        whose_l.append(i)
                        feat_l.append(a)
                    pos = int(np.flatnonzero(cols)[0])
                    for v in back_moves(box, splits, P[i], pos):     # just past a split point
                        h = P[i].copy()
                        h[pos] = v
                        cands.append(h)
                        whose_l.append(i)
                        feat_l.append(a)
        if not cands:
            break
        Q = box.snap(np.asarray(cands))
        whose, feat = np.asarray(whose_l), np.asarray(feat_l)
        pq = _score_from(box, bb, P, Q, whose)
        vq = bb.accepts(pq) & box.within(Q, params.Tmax)
        cq = cost_of(Q, pq, vq)
        bulk, bulk_of, best_single = [], [], {}
        for i in rows:
            mine = np.flatnonzero((whose == i) & vq)
            if not len(mine):
                continue
            m = merit(i, Q[mine], cq[mine])
            good = m < merit(i, P[i:i + 1], cur[i:i + 1])[0] - 1e-12
            if not good.any():
                continue
            mine, m = mine[good], m[good]
            best_single[i] = mine[np.argmin(m)]
            b = P[i].copy()
            for a in np.unique(feat[mine]):
                j = np.flatnonzero(feat[mine] == a)
                b[col_mask[a]] = Q[mine[j[np.argmin(m[j])]], col_mask[a]]
            bulk.append(b)
            bulk_of.append(i)
        moved = set()
        if bulk:
            B = box.snap(np.asarray(bulk))
            pb = _score_from(box, bb, P, B, np.asarray(bulk_of))
            vb = bb.accepts(pb) & box.within(B, params.Tmax)
            cb = cost_of(B, pb, vb)
            for r, i in enumerate(bulk_of):        # one at a time: the others' positions are current
                j = best_single[i]
                opts = [(Q[j], cq[j])] + ([(B[r], cb[r])] if vb[r] else [])
                m = merit(i, np.asarray([o[0] for o in opts]), np.asarray([o[1] for o in opts]))
                k = int(np.argmin(m))
                if m[k] < merit(i, P[i:i + 1], cur[i:i + 1])[0] - 1e-12:
                    P[i], cur[i] = opts[k]
                    moved.add(i)
        live[[i for i in rows if i not in moved]] = False
        if not moved:
            break
    return box.full(P)
