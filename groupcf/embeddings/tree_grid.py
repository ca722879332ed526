r"""An upper bound of a tree ensemble's score over the cheap points of a grid (MACE's scans).

MACE's exact scans (:mod:`groupcf.single.tree_pairs`) score the product grid of the
candidate values of 2 or 3 features, ``z`` elsewhere, and keep the cheapest accepted
point below an incumbent's cost :math:`U`. Before paying for that grid,
:func:`grid_upper` bounds the score of every grid point whose separable cost
:math:`\sum_j c_j(v_j)` is below :math:`U`:

* when the columns of the grid vary (the rest of ``z`` fixed), each tree reaches one of
  the leaves of :func:`~groupcf.embeddings.tree_delta.reachable_boxes`, and the boxes of a
  tree's reachable leaves partition the grid's columns, so every grid point lies in the
  box of exactly one leaf per tree, and its score is ``base + s * sum over trees of that
  leaf's value``;
* a grid point in a leaf's box takes, on each feature :math:`j`, one of its values inside
  the box, so it costs at least :math:`\sum_j \min\{c_j(v) : v \text{ inside}\}`; a leaf
  whose minimum is :math:`\ge U` holds no point below :math:`U`;
* hence every grid point below :math:`U` scores at most ``base + s * sum over trees of the
  largest s-signed value among the leaves holding such a point`` (``-inf`` when some tree
  has none: then no grid point is below :math:`U`).

The bound is exact arithmetic on the same leaf values (summed in another order, so a
caller compares it with a small slack).
"""
from __future__ import annotations

import math
import weakref
from typing import TYPE_CHECKING

import numpy as np

from groupcf.embeddings._typing import FloatArray, IntArray
from groupcf.embeddings.tree_delta import reachable_boxes

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.trees import TreeEnsemble

#: the tree of every node, per ensemble (built once per model)
_TREE_OF: weakref.WeakKeyDictionary[TreeEnsemble, IntArray] = weakref.WeakKeyDictionary()


def node_trees(ens: TreeEnsemble) -> IntArray:
    """The tree of every node of ``ens`` (``-1`` for a node no root reaches)."""
    hit = _TREE_OF.get(ens)
    if hit is None:
        hit = np.full(len(ens.feature), -1, dtype=np.int64)
        node, tree = ens.roots.copy(), np.arange(ens.n_trees, dtype=np.int64)
        while len(node):
            hit[node] = tree
            split = ens.feature[node] >= 0
            node, tree = node[split], tree[split]
            node, tree = np.concatenate([ens.left[node], ens.right[node]]), np.concatenate([tree, tree])
        _TREE_OF[ens] = hit
    return hit


def _range_min(cost_sorted: FloatArray, start: IntArray, stop: IntArray) -> FloatArray:
    """``min(cost_sorted[start[i]:stop[i]])`` per ``i`` (``inf`` for an empty range).

    When the costs fall, then rise along the sorted values (MACE's separable distance
    grows with a value's distance from the instance's on either side), the minimum of a
    range is at the point of the range nearest the lowest cost's position ``p``: the range
    clipped to ``p``, one lookup. Otherwise a sparse table of minima over power-of-two
    windows."""
    m = len(cost_sorted)
    out = np.full(len(start), np.inf)
    if m == 0:
        return out
    p = int(np.argmin(cost_sorted))
    d = np.diff(cost_sorted)
    if np.all(d[:p] <= 0) and np.all(d[p:] >= 0):
        ok = stop > start
        at = np.clip(p, start[ok], stop[ok] - 1)
        out[ok] = cost_sorted[at]
        return out
    table = [cost_sorted]
    w = 1
    while 2 * w <= m:
        prev = table[-1]
        table.append(np.minimum(prev[:-w], prev[w:]))
        w *= 2
    length = stop - start
    ok = length > 0
    s, e, n = start[ok], stop[ok], length[ok]
    level = np.floor(np.log2(n)).astype(np.int64)
    res = np.empty(len(s))
    for lv in np.unique(level):
        sel = level == lv
        t, span = table[int(lv)], 1 << int(lv)
        res[sel] = np.minimum(t[s[sel]], t[e[sel] - span])
    out[ok] = res
    return out


def grid_upper(ens: TreeEnsemble, z: FloatArray, groups: list[tuple[IntArray, FloatArray, FloatArray]],
               budget: float) -> float:
    """An upper bound of the score of the points ``z`` with, for each group
    ``(columns, values (m, |columns|), costs (m,))``, its columns set to one of its value
    rows, among those whose summed costs are below ``budget`` (module docstring);
    ``-inf`` when no such point exists."""
    point = np.asarray(z, dtype=np.float64).reshape(-1)
    cols = [int(c) for g in groups for c in np.asarray(g[0]).reshape(-1)]
    leaves, B = reachable_boxes(ens, point, cols)
    least = np.zeros(len(leaves))
    pos = 0
    for _, values, costs in groups:
        V = np.asarray(values, dtype=np.float64).reshape(len(costs), -1)
        c = np.asarray(costs, dtype=np.float64).reshape(-1)
        k = V.shape[1]
        if k == 1:
            order = np.argsort(V[:, 0], kind="stable")
            v = V[order, 0]
            first = np.searchsorted(v, B[:, 2 * pos], side="right")       # first value > lo
            stop = np.searchsorted(v, B[:, 2 * pos + 1], side="right")    # first value > hi
            least += _range_min(c[order], first, stop)
        else:
            lo, hi = B[:, 2 * pos:2 * (pos + k):2], B[:, 2 * pos + 1:2 * (pos + k):2]
            inside = ((V[None, :, :] > lo[:, None, :]) & (V[None, :, :] <= hi[:, None, :])).all(axis=2)
            least += np.where(inside, c[None, :], np.inf).min(axis=1, initial=np.inf)
        pos += k
    keep = least < budget
    if not keep.any():
        return -math.inf
    tree = node_trees(ens)[leaves[keep]]
    sign = 1.0 if ens.scale >= 0 else -1.0
    val = sign * ens.value[leaves[keep]]
    best = np.full(ens.n_trees, -np.inf)
    np.maximum.at(best, tree, val)
    if not np.all(np.isfinite(best)):
        return -math.inf
    return float(ens.base + ens.scale * sign * best.sum())
