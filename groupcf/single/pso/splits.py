r"""Threshold-aware local search (issue 25): single-feature moves to just past a split
point of the model, for models that expose them (:meth:`Embedding.split_points
<groupcf.embeddings.base.Embedding.split_points>`: tree ensembles).

A tree ensemble's score is constant between consecutive split points of a column, so the
cheapest change of one feature that alters the score is a move to *just past* the
nearest split point: :math:`t + \delta` upwards (a node sends :math:`x_c \le t` left),
:math:`t - \delta` downwards, :math:`\delta` = :data:`MARGIN` on the [0, 1]-scaled
column (far below any metric's resolution, far above float rounding of the raw value's
round trip). The swarm samples the box continuously and rarely lands just past a
threshold, so it misses counterfactuals made of a few such small crossings (the exact
optimum on Hill-Valley's forests changes three features by 0.07-0.37 MAD). Two uses:

* :func:`ascend` — **crossings**: from the query, repeatedly take the single-feature move
  to just past one of the split tests the current point goes through (the model's
  ``path_splits``: every such move changes a tree's leaf; the :data:`K_NEAR` nearest per
  direction and active continuous feature) with the largest gain of probability per unit
  of objective (:math:`\Delta p / \Delta f`), until the model accepts the point.
  Up to ``ascents`` distinct accepted points (:class:`~groupcf.single.pso.params.PSOOptions`)
  per query, in at most twice as many searches: the first greedy; each of the next ones
  greedy with one feature of the first point banned (its dearest change first), so the
  points differ where it matters; the rest pick among the three best ratios at random.
  Every accepted point joins the pool the diverse selection picks from. With
  ``ascent_scope="all"`` the searches (and the polish) move every actionable feature over
  its whole range, not only the swarm's box: in MADs the cheapest crossings are often on
  features the information value ranks low (LSVT: a query whose swarm answer moved 15
  features by up to 1,200 MADs has crossings at 0.03 MAD on average).
* :func:`back_moves` — **polish**: for each changed continuous feature of a
  counterfactual, the values just past each split point between the query and its value
  (the nearest ``K`` to the query): the smallest change of that feature that keeps it on
  the far side of that split. :func:`~groupcf.single.pso.select.polish` scores them with
  its other moves.

Only the model's split points are used (through the embedding protocol), never its type.
"""
from __future__ import annotations

import numpy as np

#: distance past a split point, on the [0, 1]-scaled column
MARGIN = 1e-9
#: split points tried per feature and direction
K_NEAR = 2
#: greedy steps per ascent at most
MAX_STEPS = 40


def box_splits(box, points: list[np.ndarray] | None) -> dict[int, np.ndarray] | None:
    """Per continuous box position (integer features excluded: they snap to their grid),
    the model's split points inside the box ``(lo, hi)``; ``None`` without split points."""
    if points is None:
        return None
    integer = {pos for pos, _, _ in box.int_scale}
    out = {}
    for pos in box.cont:
        if int(pos) in integer:
            continue
        t = np.asarray(points[int(box.cols[pos])], dtype=float)
        t = t[(t >= box.lo[pos]) & (t < box.hi[pos])]
        if len(t):
            out[int(pos)] = t
    return out


def _cost(box, P, w2, w3):
    l2, l3 = box.terms(P)
    return w2 * l2 + w3 * l3


def crossing_moves(box, bb, splits: dict, p: np.ndarray, k: int = K_NEAR, skip=frozenset()) -> np.ndarray:
    """Rows equal to the point ``p`` (box columns) except one continuous feature moved to
    just past one of the split tests ``p``'s own evaluation goes through (the model's
    ``path_splits``; all its split points where it has none): the ``k`` nearest on
    either side per feature, so every move changes at least one tree's leaf (snapped).
    Positions in ``skip`` do not move."""
    path = bb.path_splits(box.full(p[None, :])[0])
    if path is not None:
        pos_of = {int(box.cols[pos]): pos for pos in splits}
        cols, ths = path
        keep = np.isin(cols, list(pos_of))
        by_pos: dict[int, list] = {}
        for c, t in zip(cols[keep].tolist(), ths[keep].tolist()):
            by_pos.setdefault(pos_of[c], []).append(t)
        cand = {pos: np.unique(v) for pos, v in by_pos.items()}
    else:
        cand = splits
    rows = []
    for pos, t in cand.items():
        if pos in skip:
            continue
        v = p[pos]
        up = t[t >= v][:k] + MARGIN                 # t >= v: v goes left; t + MARGIN right
        down = t[t < v][::-1][:k] - MARGIN           # t < v: v goes right; t - MARGIN left
        vals = np.concatenate([up[up <= box.hi[pos]], down[down >= box.lo[pos]]])
        if len(vals):
            R = np.repeat(p[None, :], len(vals), axis=0)
            R[:, pos] = vals
            rows.append(R)
    if not rows:
        return np.zeros((0, len(p)))
    return box.snap(np.vstack(rows))


def _climb(box, bb, splits, params, rng, skip, greedy: bool):
    """One greedy crossing search from the query: ``(point, cost)`` once accepted, else
    ``None``; ``greedy``: the best ratio at each step, else one of the best three."""
    w2, w3 = params.w_proximity, params.w_sparsity
    p = box.p0.copy()
    pr = float(bb.score(box.full(p[None, :]))[0])
    c = 0.0
    for _ in range(MAX_STEPS):
        C = crossing_moves(box, bb, splits, p, skip=skip)
        if not len(C):
            return None
        ok = box.within(C, params.Tmax)
        pc = bb.score_near(box.full(p[None, :])[0], box.full(C))     # one feature changed: partial
        cc = _cost(box, C, w2, w3)
        gain = pc - pr
        ratio = np.where(ok & (gain > 1e-12), gain / np.maximum(cc - c, 1e-12), -np.inf)
        top = np.argsort(-ratio, kind="stable")[:1 if greedy else 3]
        top = top[np.isfinite(ratio[top])]
        if not len(top):
            return None
        j = int(top[0]) if greedy else int(top[rng.integers(len(top))])
        p, pr, c = C[j], float(pc[j]), float(cc[j])
        if bb.accepts(np.array([pr]))[0]:
            return p, c
    return None


def ascend(box, bb, splits: dict, params, rng: np.random.Generator, restarts: int) -> tuple[np.ndarray, np.ndarray]:
    """``(P, cost)``: up to ``restarts`` distinct accepted points (box columns) reached by
    greedy crossings from the query (module docstring), in at most ``2 restarts`` searches."""
    found: list[np.ndarray] = []
    costs: list[float] = []
    if not splits:
        return np.zeros((0, box.dim)), np.zeros(0)
    dear: np.ndarray | None = None          # the first point's changed features, dearest first
    for r in range(2 * restarts):
        if len(found) >= restarts:
            break
        skip: frozenset = frozenset()
        banning = False
        if dear is not None and 0 < r <= len(dear):
            banning = True
            skip = frozenset(np.flatnonzero(box.owner == dear[r - 1]).tolist())
        hit = _climb(box, bb, splits, params, rng, skip, greedy=r == 0 or banning)
        if hit is None:
            continue
        p, c = hit
        if dear is None:
            D = box.feature_deltas(p[None, :])[0]
            share = D * box.scale * params.w_proximity + params.w_sparsity * (D > 0)
            dear = np.flatnonzero(D > 0)[np.argsort(-share[D > 0], kind="stable")]
        if not any(np.array_equal(p, q) for q in found):
            found.append(p)
            costs.append(c)
    if not found:
        return np.zeros((0, box.dim)), np.zeros(0)
    return np.asarray(found), np.asarray(costs)


def back_moves(box, splits: dict | None, p: np.ndarray, pos: int, k: int = 8) -> np.ndarray:
    """Values of the continuous box position ``pos`` of the point ``p`` just past each
    split point between the query's value and ``p[pos]`` (the ``k`` nearest the query),
    i.e. each the smallest change that stays beyond that split point."""
    if not splits or pos not in splits:
        return np.zeros(0)
    t, v0, v = splits[pos], box.p0[pos], p[pos]
    if v > v0:
        vals = t[(t >= v0) & (t < v)][:k] + MARGIN
        return vals[vals < v]
    if v < v0:
        vals = t[(t >= v) & (t < v0)][::-1][:k] - MARGIN
        return vals[vals > v]
    return np.zeros(0)
