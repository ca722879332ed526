"""Diverse selection (Shekhar et al. 2023, §V-B2) and the greedy polish.

* :func:`diverse_subset`: k-means (k = number requested) over the distinct valid
  candidates, one representative per cluster — the *best* (lowest objective) of the
  cluster, not a random one — returned best first. With at most k candidates all are
  returned.
* :func:`polish`: per counterfactual, repeatedly try undoing each changed feature and
  moving each changed continuous feature half-way back to the query; keep the best
  candidate the model still accepts when it lowers the objective; stop when none does.
  All candidates of all counterfactuals of a round are scored in one model call.
"""
from __future__ import annotations

import numpy as np

from ...utils import value_key


def unique_rows(Z: np.ndarray, cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``Z`` (keeping the lowest cost of each), sorted by cost."""
    order = np.argsort(cost, kind="stable")
    seen, keep = set(), []
    for i in order:
        k = value_key(np.round(Z[i], 9))
        if k not in seen:
            seen.add(k)
            keep.append(i)
    keep = np.asarray(keep, dtype=np.int64)
    return Z[keep], cost[keep]


def diverse_subset(Z: np.ndarray, cost: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Indices (into ``Z``) of ``k`` representatives, best first."""
    if len(Z) <= k:
        return np.argsort(cost, kind="stable")
    labels = kmeans(Z, k, np.random.default_rng(seed))
    reps = []
    for c in range(k):
        members = np.flatnonzero(labels == c)
        if len(members):
            reps.append(members[np.argmin(cost[members])])
    reps = np.asarray(reps, dtype=np.int64)
    return reps[np.argsort(cost[reps], kind="stable")]


def kmeans(Z: np.ndarray, k: int, rng: np.random.Generator, iterations: int = 30) -> np.ndarray:
    """Cluster labels of the rows of ``Z`` by Lloyd's k-means with k-means++ seeding
    (numpy; sklearn's KMeans costs ~0.2 s per call in thread start-up on small pools)."""
    C = [Z[rng.integers(len(Z))]]
    d2 = ((Z - C[0]) ** 2).sum(axis=1)
    for _ in range(1, k):
        tot = d2.sum()
        i = rng.choice(len(Z), p=d2 / tot) if tot > 0 else rng.integers(len(Z))
        C.append(Z[i])
        d2 = np.minimum(d2, ((Z - Z[i]) ** 2).sum(axis=1))
    C = np.asarray(C)
    labels = np.full(len(Z), -1)
    for _ in range(iterations):
        D = (Z ** 2).sum(axis=1)[:, None] - 2 * Z @ C.T + (C ** 2).sum(axis=1)[None, :]
        new = np.argmin(D, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for c in range(k):
            members = labels == c
            if members.any():
                C[c] = Z[members].mean(axis=0)
    return labels


def polish(box, bb, Z: np.ndarray, params, max_rounds: int = 30) -> np.ndarray:
    """Greedy sparsity/proximity polish of valid encoded rows ``Z`` (a new array); every
    returned row is still accepted by ``bb`` (checked on the scores of the same call).

    Each round scores, for every counterfactual, each single move (undo one changed
    feature; move a changed continuous one half-way back), then the *bulk* move that
    applies every improving single move at once (for each feature its best one); the
    better of the bulk move (if still accepted) and the best single move is kept."""
    P = Z[:, box.cols].copy()
    thr = bb.threshold

    def cost_of(Q, p, valid):
        return box.objective(Q, p, valid, thr, params.invalid_penalty, params.w_proximity, params.w_sparsity)

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
        cands, whose, feat = [], [], []
        for r, i in enumerate(rows):
            for a in np.flatnonzero(D[r] > 0):
                cols = col_mask[a]
                q = P[i].copy()
                q[cols] = box.p0[cols]
                cands.append(q)
                whose.append(i)
                feat.append(a)
                if cont_owner[a]:
                    h = P[i].copy()
                    h[cols] = 0.5 * (P[i, cols] + box.p0[cols])
                    cands.append(h)
                    whose.append(i)
                    feat.append(a)
        if not cands:
            break
        Q = box.snap(np.asarray(cands))
        whose, feat = np.asarray(whose), np.asarray(feat)
        pq = bb.score(box.full(Q))
        vq = bb.accepts(pq)
        cq = cost_of(Q, pq, vq)
        bulk, bulk_of = [], []
        best_single = {}
        for i in rows:
            mine = np.flatnonzero((whose == i) & vq & (cq < cur[i] - 1e-12))
            if not len(mine):
                continue
            best_single[i] = mine[np.argmin(cq[mine])]
            b = P[i].copy()
            for a in np.unique(feat[mine]):
                j = mine[feat[mine] == a]
                j = j[np.argmin(cq[j])]
                b[col_mask[a]] = Q[j, col_mask[a]]
            bulk.append(b)
            bulk_of.append(i)
        improved = False
        if bulk:
            B = box.snap(np.asarray(bulk))
            pb = bb.score(box.full(B))
            vb = bb.accepts(pb)
            cb = cost_of(B, pb, vb)
            for r, i in enumerate(bulk_of):
                j = best_single[i]
                if vb[r] and cb[r] < cq[j]:
                    P[i], cur[i] = B[r], cb[r]
                else:
                    P[i], cur[i] = Q[j], cq[j]
                improved = True
        live[[i for i in rows if i not in best_single]] = False
        if not improved:
            break
    return box.full(P)
