"""Split points of a :class:`~groupcf.embeddings.trees.TreeEnsemble` (the embedding
protocol's :meth:`~groupcf.embeddings.base.Embedding.split_points` and
:meth:`~groupcf.embeddings.base.Embedding.path_splits`): where its score can change
along one column, and which tests one point's evaluation goes through."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from groupcf.embeddings._typing import ArrayLike, FloatArray, IntArray

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.trees import TreeEnsemble


def split_points(ens: TreeEnsemble) -> list[FloatArray]:
    """Per input column, the sorted distinct thresholds of the nodes splitting on it (a
    node sends ``x`` left iff ``x[c] <= t``)."""
    split = ens.feature >= 0
    f, t = ens.feature[split], ens.threshold[split]
    order = np.lexsort((t, f))
    f, t = f[order], t[order]
    ends = np.searchsorted(f, np.arange(ens.n_inputs + 1))
    return [np.unique(t[ends[c]:ends[c + 1]]) for c in range(ens.n_inputs)]


def path_splits(ens: TreeEnsemble, z: ArrayLike) -> tuple[IntArray, FloatArray]:
    """``(columns, thresholds)`` of every split node on the path of the point ``z`` in
    each tree (with repeats across trees)."""
    point = np.asarray(z, dtype=np.float64).reshape(-1)
    idx = ens.roots.copy()
    cols: list[IntArray] = []
    ths: list[FloatArray] = []
    for _ in range(ens.depth):
        split = ens.feature[idx] >= 0
        if not split.any():
            break
        idx = idx[split]
        f, t = ens.feature[idx], ens.threshold[idx]
        cols.append(f)
        ths.append(t)
        idx = np.where(point[f] <= t, ens.left[idx], ens.right[idx])
    if not cols:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate(cols), np.concatenate(ths)


def leaf_boxes(ens: TreeEnsemble, leaves: IntArray, lb: ArrayLike, ub: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """The input cell of each of ``leaves`` (nodes of ``ens``) inside the box ``[lb, ub]``:
    ``(lo, hi)`` of shape ``(len(leaves), n_inputs)``; a left branch ``x <= t`` gives
    ``hi <= t``, a right branch ``lo >= nextafter(t)``. Every input of the box reaching the
    leaf lies in its cell."""
    split = np.flatnonzero(ens.feature >= 0)
    parent = np.full(len(ens.feature), -1, dtype=np.int64)
    parent[ens.left[split]] = split
    parent[ens.right[split]] = split
    is_left = np.zeros(len(ens.feature), dtype=bool)
    is_left[ens.left[split]] = True
    lo = np.tile(np.asarray(lb, dtype=float), (len(leaves), 1))
    hi = np.tile(np.asarray(ub, dtype=float), (len(leaves), 1))
    rows, cur = np.arange(len(leaves)), np.asarray(leaves, dtype=np.int64)
    while len(cur):
        up = parent[cur]
        ok = up >= 0
        rows, left, up = rows[ok], is_left[cur[ok]], up[ok]
        col, t = ens.feature[up], ens.threshold[up]
        np.minimum.at(hi, (rows[left], col[left]), t[left])
        np.maximum.at(lo, (rows[~left], col[~left]), np.nextafter(t[~left], np.inf))
        cur = up
    return lo, hi


def node_depths(ens: TreeEnsemble) -> IntArray:
    """Depth of every node reachable from a root (0 at the roots; -1 for the others)."""
    depth = np.full(len(ens.feature), -1, dtype=np.int64)
    frontier, d = ens.roots, 0
    while len(frontier):
        depth[frontier] = d
        sp = frontier[ens.feature[frontier] >= 0]
        frontier = np.concatenate([ens.left[sp], ens.right[sp]])
        d += 1
    return depth


@dataclass(frozen=True)
class LeafCells:
    """Every leaf of an ensemble with its input cell (:func:`leaf_boxes` over all of
    space): values ``(L,)``, cells ``lo``/``hi`` ``(L, c)`` on the columns ``cols`` some
    split tests, and ``starts`` (the first leaf of each tree; leaves in preorder)."""

    value: FloatArray
    lo: FloatArray
    hi: FloatArray
    cols: IntArray
    starts: IntArray


def leaf_cells(ens: TreeEnsemble) -> LeafCells:
    """The :class:`LeafCells` of ``ens``."""
    leaves = np.flatnonzero(ens.feature < 0)
    n = ens.n_inputs
    lo, hi = leaf_boxes(ens, leaves, np.full(n, -np.inf), np.full(n, np.inf))
    cols = np.unique(ens.feature[ens.feature >= 0])
    tree = np.searchsorted(ens.roots, leaves, side="right") - 1      # each tree one block (TreeEnsemble checks)
    starts = np.searchsorted(tree, np.arange(ens.n_trees))
    return LeafCells(ens.value[leaves], lo[:, cols], hi[:, cols], cols, starts)


def box_upper(ens: TreeEnsemble, cells: LeafCells, lb: ArrayLike, ub: ArrayLike,
              chunk: int = 20_000_000) -> FloatArray:
    """Per box ``[lb[k], ub[k]]``: ``base + s * sum over trees of max (s >= 0; min when
    s < 0) of the values of the leaves whose cell meets the box``. Every input of the box
    reaches, in each tree, a leaf whose cell contains it, so its score is at most that."""
    low = np.atleast_2d(np.asarray(lb, dtype=np.float64))[:, cells.cols]
    up = np.atleast_2d(np.asarray(ub, dtype=np.float64))[:, cells.cols]
    K, L = len(low), len(cells.value)
    out = np.empty(K)
    per = max(1, chunk // max(1, L * max(1, len(cells.cols))))
    sign = 1.0 if ens.scale >= 0 else -1.0
    for s in range(0, K, per):
        lo_k, up_k = low[s:s + per, None, :], up[s:s + per, None, :]
        meet = ((lo_k <= cells.hi[None]) & (up_k >= cells.lo[None])).all(axis=2)
        v = np.where(meet, sign * cells.value[None, :], -np.inf)
        out[s:s + per] = np.maximum.reduceat(v, cells.starts, axis=1).sum(axis=1)
    return ens.base + ens.scale * sign * out
