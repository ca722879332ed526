r"""Partial evaluation of a tree ensemble around one point (GeCo, Schleich et al. 2021, §5.2).

GeCo scores thousands of candidates that equal the instance :math:`z^0` except on a few
columns :math:`C`. For a tree whose path of :math:`z^0` never tests a column of
:math:`C`, every such candidate follows the same path (each test on it reads a column
that did not change) and reaches :math:`z^0`'s leaf. For the other trees, every test
above the first node of the path that reads a column of :math:`C` is decided the same
way too, so a candidate's walk starts at that node. Hence, exactly,

.. math::

    \mathrm{score}(z) = \mathrm{score}(z^0) + s \sum_{k \in A(C)}
        \big(v_{k,\ell_k(z)} - v_{k,\ell_k(z^0)}\big),
    \qquad A(C) = \{k : \text{the path of } z^0 \text{ in tree } k \text{ tests a column of } C\},

where :math:`\ell_k(z)` is found by walking tree :math:`k` from the first node of
:math:`z^0`'s path testing :math:`C` (only the leaves reachable when the columns of
:math:`C` vary are visited). :math:`A(C)` and the start nodes are computed once per
column set (cached) from the :math:`z^0`-path matrix; the candidates of every column set
of a call are walked together in one vectorised pass, or, with numba installed (the ``fast``
extra), in the compiled loop of :mod:`groupcf.embeddings._tree_walk` (same start nodes, same
sums in the same order: the same bits).
"""
from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from groupcf.embeddings import _tree_walk
from groupcf.embeddings._typing import ArrayLike, FloatArray, IntArray
from groupcf.embeddings.base import DeltaEvaluator

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.trees import TreeEnsemble




#: the walk's tables of each ensemble (they do not depend on z0; built once per model)
_TABLES: weakref.WeakKeyDictionary[TreeEnsemble, tuple[IntArray, FloatArray, FloatArray, IntArray]] = \
    weakref.WeakKeyDictionary()


def _walk_tables(e: TreeEnsemble) -> tuple[IntArray, FloatArray, FloatArray, IntArray]:
    """``(feature, threshold, value, child)`` indexed by ``2 * node``: a leaf tests column 0
    against +inf and is its own child, so every walk takes the same number of steps with no
    per-step compaction (``child[2n + 1]``: ``2 * left``, ``child[2n]``: ``2 * right``)."""
    hit = _TABLES.get(e)
    if hit is None:
        leaf = e.feature < 0
        own = np.arange(len(e.feature), dtype=np.int64)
        child = np.empty(2 * len(e.feature), dtype=np.int64)
        child[0::2] = 2 * np.where(leaf, own, e.right)
        child[1::2] = 2 * np.where(leaf, own, e.left)
        hit = (np.repeat(np.where(leaf, 0, e.feature), 2), np.repeat(np.where(leaf, np.inf, e.threshold), 2),
               np.repeat(e.value, 2), child)
        _TABLES[e] = hit
    return hit


#: the compiled walk's tables of each ensemble (:func:`~groupcf.embeddings._tree_walk.node_table`)
_NODES: weakref.WeakKeyDictionary[TreeEnsemble, tuple[IntArray, FloatArray]] = weakref.WeakKeyDictionary()


def _node_table(e: TreeEnsemble) -> tuple[IntArray, FloatArray]:
    hit = _NODES.get(e)
    if hit is None:
        hit = _NODES[e] = _tree_walk.node_table(e.feature, e.threshold, e.left, e.right)
    return hit


class TreeAnchors(NamedTuple):
    """Rows with their path through every tree (:meth:`TreeDelta.anchors`)."""

    Z: FloatArray                 #: the rows, ``(m, n_inputs)``
    paths: np.ndarray             #: node of each row's path per tree and level, ``(m, trees, depth + 1)``
    first: np.ndarray             #: first level testing each column, ``(m, n_inputs, trees)`` (depth + 1: none)
    leaf_value: FloatArray        #: the value of each row's leaf per tree, ``(m, trees)``
    score: FloatArray             #: each row's score, ``(m,)``

    def take(self, idx: ArrayLike) -> TreeAnchors:
        """The anchors ``idx``."""
        i = np.asarray(idx, dtype=np.int64)
        return TreeAnchors(*(f[i] for f in self))

    def join(self, other: TreeAnchors) -> TreeAnchors:
        """These anchors, then ``other``'s."""
        return TreeAnchors(*(np.concatenate([f, g]) for f, g in zip(self, other)))

class TreeDelta(DeltaEvaluator):
    """:meth:`TreeEnsemble.delta_evaluator <groupcf.embeddings.trees.TreeEnsemble.delta_evaluator>`:
    only the trees whose path of ``z0`` tests a changed column are walked, each from the
    first such node (module docstring)."""

    embedding: TreeEnsemble

    def __init__(self, embedding: TreeEnsemble, z0: ArrayLike) -> None:
        super().__init__(embedding, z0)
        e = embedding
        depth = max(e.depth, 1)
        path = np.full((e.n_trees, depth + 1), -1, dtype=np.int64)   # nodes of z0's path
        idx = e.roots.copy()
        for d in range(depth + 1):
            path[:, d] = idx
            f = e.feature[idx]
            split = f >= 0
            if not split.any():
                break
            go_left = self.z0[np.where(split, f, 0)] <= e.threshold[idx]
            idx = np.where(split, np.where(go_left, e.left[idx], e.right[idx]), idx)
        self._leaf_value = e.value[idx]                               # z0's leaf per tree
        self._s0 = float(e.base + e.scale * self._leaf_value.sum())
        feat = np.where(path >= 0, np.maximum(e.feature[np.maximum(path, 0)], -1), -1)   # any leaf: -1
        self._path_nodes = path
        self._path_feat = feat                                        # -1: leaf / past the leaf
        # first[c, k]: the first level of z0's path in tree k that tests column c (depth + 1:
        # none); a mask's start level in tree k is the least over its changed columns
        first = np.full((e.n_inputs + 1, e.n_trees), depth + 1, dtype=np.int64)
        trees = np.arange(e.n_trees)
        for d in range(depth, -1, -1):
            first[feat[:, d], trees] = d                              # -1 (past a leaf): the last row
        self._first = first[:-1]
        self._first_t = np.ascontiguousarray(self._first.T)             # (trees, columns): the compiled walk's
        self._feat, self._thr, self._value, self._child = _walk_tables(e)

    by_rows = True

    #: walk with the compiled loop of :mod:`~groupcf.embeddings._tree_walk` (numba, the
    #: ``fast`` extra) when it is installed; the numpy walk below gives the same bits
    compiled: bool = _tree_walk.COMPILED

    def score_rows(self, Z: ArrayLike, changed: ArrayLike) -> FloatArray:
        P = np.asarray(Z, dtype=np.float64)
        mask = np.asarray(changed, dtype=np.bool_)
        e, m = self.embedding, len(P)
        if m == 0:
            return np.zeros(0)
        # the affected trees and start nodes once per distinct changed-column mask
        packed = np.ascontiguousarray(np.packbits(mask, axis=1))
        keys = packed.view(np.dtype((np.void, packed.shape[1]))).reshape(-1)
        _, first_row, inv = np.unique(keys, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        U = mask[first_row]
        walk = _tree_walk.compiled_rows_delta() if self.compiled else None
        if walk is not None:
            nodes, thr = _node_table(e)
            walked = walk(np.ascontiguousarray(P), np.ascontiguousarray(U), inv.astype(np.uint32),
                          self._first_t, self._path_nodes, nodes, thr, e.value, self._leaf_value)
            return np.asarray(self._s0 + e.scale * walked, dtype=np.float64)
        none = self._path_feat.shape[1]                        # depth + 1: the tree is not affected
        start = np.full((len(U), e.n_trees), none, dtype=np.min_scalar_type(none))   # (masks, trees)
        r, c = np.nonzero(U)
        if len(r):
            cut = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
            start[r[cut]] = np.minimum.reduceat(self._first[c], cut, axis=0)
        # the (candidate, affected tree) pairs by start level, shallowest first (a stable
        # radix sort of the 8- or 16-bit levels): at depth d only the prefix starting at or above d
        # steps, so a pair takes depth - level steps, not depth - (the least level)
        levels = start[inv].ravel()
        order = np.argsort(levels, kind="stable")
        level = levels[order]
        ends = np.searchsorted(level, np.arange(none), side="right")
        order = order[:ends[none - 2]]                      # none >= 2; level none: not affected
        level = level[:len(order)]
        row, tree = np.divmod(order, e.n_trees)
        idx = 2 * self._path_nodes[tree, level]
        flat, at = P.ravel(), row * P.shape[1]
        feat, thr, child = self._feat, self._thr, self._child
        for d in range(int(level[0]) if len(level) else none, none - 1):
            k = ends[d]
            i = idx[:k]
            idx[:k] = child[i + (flat[at[:k] + feat[i]] <= thr[i])]
        # each row's sum over its trees in tree order (a sequential cumsum of the row-major
        # (candidate, tree) grid, unaffected trees 0), as before the pairs were sorted
        w = np.zeros((m, e.n_trees))
        w.ravel()[order] = self._value[idx] - self._leaf_value[tree]
        delta = np.cumsum(w, axis=1)[:, -1]
        out: FloatArray = np.asarray(self._s0 + e.scale * delta, dtype=np.float64)
        return out

    by_anchor = True

    def anchors(self, Z: ArrayLike) -> TreeAnchors:
        """The paths of the rows ``Z`` (shape ``(m, n_inputs)``) through every tree, from
        which :meth:`score_from` scores rows near them (GeCo's parents)."""
        e = self.embedding
        A = np.asarray(Z, dtype=np.float64).reshape(-1, e.n_inputs)
        m, T, depth = len(A), e.n_trees, self._path_feat.shape[1] - 1
        paths = np.empty((m, T, depth + 1), dtype=np.int64)
        idx = np.repeat(2 * e.roots[None, :], m, axis=0)
        flat, at = A.ravel(), np.arange(m)[:, None] * e.n_inputs
        for d in range(depth + 1):
            paths[:, :, d] = idx // 2
            if d < depth:
                idx = self._child[idx + (flat[at + self._feat[idx]] <= self._thr[idx])]
        feat = np.maximum(e.feature[paths], -1)                     # a leaf (repeated): -1
        first = np.full((m, e.n_inputs + 1, T), depth + 1, dtype=np.min_scalar_type(depth + 1))
        rows, trees = np.arange(m)[:, None], np.arange(T)[None, :]
        for d in range(depth, -1, -1):
            first[rows, feat[:, :, d], trees] = d
        leaf_value = e.value[paths[:, :, depth]]
        return TreeAnchors(A.copy(), paths, first[:, :-1], leaf_value, e.base + e.scale * leaf_value.sum(axis=1))

    def score_from(self, Z: ArrayLike, anchors: TreeAnchors, ids: ArrayLike) -> FloatArray:
        """Scores of the rows ``Z``, each walked from its anchor ``anchors[ids[i]]``: the
        module's argument with the anchor in place of ``z0`` (the trees whose path of the
        anchor tests a column where the row differs from it, each from the first such node)."""
        e = self.embedding
        P = np.asarray(Z, dtype=np.float64).reshape(-1, e.n_inputs)
        a = np.asarray(ids, dtype=np.int64).reshape(-1)
        m, none = len(P), self._path_feat.shape[1]
        start = np.full((m, e.n_trees), none, dtype=np.min_scalar_type(none))
        r, c = np.nonzero(anchors.Z[a] != P)
        if len(r):
            cut = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
            start[r[cut]] = np.minimum.reduceat(anchors.first[a[r], c], cut, axis=0)
        row, tree = np.nonzero(start < none)
        level = start[row, tree]
        # pairs by start level, shallowest first: at depth d only the prefix starting at or
        # above d steps (a parent's path is left deep in the trees, unlike z0's)
        order = np.argsort(level, kind="stable")
        row, tree, level = row[order], tree[order], level[order]
        idx = 2 * anchors.paths[a[row], tree, level]
        ends = np.searchsorted(level, np.arange(none), side="right")
        flat, at = P.ravel(), row * e.n_inputs
        feat, thr, child = self._feat, self._thr, self._child
        for d in range(int(level[0]) if len(level) else none, none - 1):
            k = ends[d]
            i = idx[:k]
            idx[:k] = child[i + (flat[at[:k] + feat[i]] <= thr[i])]
        delta = np.bincount(row, weights=self._value[idx] - anchors.leaf_value[a[row], tree], minlength=m)
        out: FloatArray = np.asarray(anchors.score[a] + e.scale * delta, dtype=np.float64)
        return out

    def score_groups(self, groups: Iterable[tuple[ArrayLike, ArrayLike]]) -> list[FloatArray]:
        blocks: list[FloatArray] = []
        masks: list[np.ndarray] = []
        sizes: list[int] = []
        for group_cols, group_Zc in groups:
            cols, Zc = self._args(group_cols, group_Zc)
            Z = np.repeat(self.z0[None, :], len(Zc), axis=0)
            Z[:, cols] = Zc
            mask = np.zeros((len(Zc), len(self.z0)), dtype=bool)
            mask[:, cols] = True
            blocks.append(Z)
            masks.append(mask)
            sizes.append(len(Zc))
        if not blocks:
            return []
        s = self.score_rows(np.vstack(blocks), np.vstack(masks))
        return np.split(s, np.cumsum(sizes)[:-1])


def column_scores(ens: TreeEnsemble, z: ArrayLike, c: int, values: ArrayLike) -> FloatArray:
    """Scores of the point ``z`` with column ``c`` set to each of ``values`` (shape ``(m,)``),
    exactly, from each tree's leaves reachable when only column ``c`` varies: every tree is
    walked once from its root, following ``z`` at the nodes testing another column and
    both ways at the nodes testing ``c`` (each branch keeps the interval ``(lo, hi]`` of
    ``x_c`` that reaches it), and each leaf's value is added to the values in its interval
    (a difference array over the sorted values)."""
    point = np.asarray(z, dtype=np.float64).reshape(-1)
    vals = np.asarray(values, dtype=np.float64).reshape(-1)
    node = ens.roots.copy()
    lo, hi = np.full(len(node), -np.inf), np.full(len(node), np.inf)
    out_node: list[np.ndarray] = []
    out_lo: list[FloatArray] = []
    out_hi: list[FloatArray] = []
    while len(node):
        f = ens.feature[node]
        leaf = f < 0
        out_node.append(node[leaf])
        out_lo.append(lo[leaf])
        out_hi.append(hi[leaf])
        node, lo, hi, f = node[~leaf], lo[~leaf], hi[~leaf], f[~leaf]
        t = ens.threshold[node]
        on_c = f == c
        other = ~on_c
        nxt = np.where(point[np.where(other, f, 0)] <= t, ens.left[node], ens.right[node])
        n_o, lo_o, hi_o = nxt[other], lo[other], hi[other]
        n_c, lo_c, hi_c, t_c = node[on_c], lo[on_c], hi[on_c], t[on_c]
        left_hi, right_lo = np.minimum(hi_c, t_c), np.maximum(lo_c, t_c)
        go_l, go_r = lo_c < left_hi, right_lo < hi_c              # non-empty intervals
        node = np.concatenate([n_o, ens.left[n_c[go_l]], ens.right[n_c[go_r]]])
        lo = np.concatenate([lo_o, lo_c[go_l], right_lo[go_r]])
        hi = np.concatenate([hi_o, left_hi[go_l], hi_c[go_r]])
    leaves, lo, hi = np.concatenate(out_node), np.concatenate(out_lo), np.concatenate(out_hi)
    order = np.argsort(vals, kind="stable")
    v = vals[order]
    diff = np.zeros(len(v) + 1)
    np.add.at(diff, np.searchsorted(v, lo, side="right"), ens.value[leaves])   # first value > lo
    np.add.at(diff, np.searchsorted(v, hi, side="right"), -ens.value[leaves])  # first value > hi
    out = np.empty(len(v))
    out[order] = ens.base + ens.scale * np.cumsum(diff)[:-1]
    return out


def pair_scores(ens: TreeEnsemble, z: ArrayLike, c1: int, values1: ArrayLike, c2: int,
                values2: ArrayLike) -> FloatArray:
    """Scores of the point ``z`` with column ``c1`` set to each of ``values1`` and ``c2`` to
    each of ``values2`` (shape ``(m1, m2)``): :func:`grid_scores` of the two columns."""
    if c1 == c2:
        raise ValueError("pair_scores needs two different columns")
    return grid_scores(ens, z, [c1, c2], [values1, values2])


def reachable_boxes(ens: TreeEnsemble, z: ArrayLike, cols: list[int]) -> tuple[IntArray, FloatArray]:
    """The leaves of ``ens`` reachable from the point ``z`` when the columns ``cols`` vary,
    and each leaf's box: ``(leaves, B)``, ``B`` of shape ``(len(leaves), 2k)`` holding
    ``lo_1, hi_1, ..., lo_k, hi_k`` (infinite when unbounded). Every tree is walked once from
    its root, following ``z`` at the nodes testing another column and both ways at the nodes
    testing one of ``cols`` (each branch keeps the box of intervals ``(lo_j, hi_j]`` that
    reaches it, non-empty ones only); per tree the boxes partition the space of ``cols``."""
    point = np.asarray(z, dtype=np.float64).reshape(-1)
    k = len(cols)
    if len(set(int(c) for c in cols)) != k:
        raise ValueError("grid_scores needs distinct columns")
    # one walk per (ensemble, point, column set) for the scans' successive calls (edges,
    # bound, grid): the last walk is kept, its columns sorted, read-only
    key = (point.tobytes(), tuple(sorted(int(c) for c in cols)))
    last = _LAST_WALK[0] if _LAST_WALK else None
    if last is not None and last[0]() is ens and last[1] == key:
        leaves, B = last[2]
    else:
        leaves, B = _walk_boxes(ens, point, list(key[1]))
        leaves.setflags(write=False)
        B.setflags(write=False)
        _LAST_WALK[:] = [(weakref.ref(ens), key, (leaves, B))]
    at = {c: j for j, c in enumerate(key[1])}
    perm = [at[int(c)] for c in cols]
    if perm == list(range(k)):
        return leaves, B
    return leaves, B[:, np.ravel([[2 * j, 2 * j + 1] for j in perm])]


#: the last walk of :func:`reachable_boxes`: ``(weakref to the ensemble, key, (leaves, boxes))``
_LAST_WALK: list[tuple[weakref.ref[TreeEnsemble], tuple[bytes, tuple[int, ...]], tuple[IntArray, FloatArray]]] = []


def _walk_boxes(ens: TreeEnsemble, point: FloatArray, cols: list[int]) -> tuple[IntArray, FloatArray]:
    """:func:`reachable_boxes`, walked."""
    k = len(cols)
    col_of = np.full(ens.n_inputs, -1, dtype=np.int64)
    col_of[np.asarray(cols, dtype=np.int64)] = np.arange(k)
    node = ens.roots.copy()
    box = np.empty((len(node), 2 * k))                   # lo_1, hi_1, lo_2, hi_2, ...
    box[:, 0::2], box[:, 1::2] = -np.inf, np.inf
    out_node: list[np.ndarray] = []
    out_box: list[FloatArray] = []
    while len(node):
        f = ens.feature[node]
        leaf = f < 0
        out_node.append(node[leaf])
        out_box.append(box[leaf])
        node, box, f = node[~leaf], box[~leaf], f[~leaf]
        t = ens.threshold[node]
        j_of = col_of[f]
        other = j_of < 0
        nxt = np.where(point[np.where(other, f, 0)] <= t, ens.left[node], ens.right[node])
        parts_n: list[np.ndarray] = [nxt[other]]
        parts_b: list[FloatArray] = [box[other]]
        on = np.flatnonzero(~other)
        if len(on):
            n_c, b_c, t_c, j_c = node[on], box[on], t[on], j_of[on]
            r = np.arange(len(on))
            lo, hi = b_c[r, 2 * j_c], b_c[r, 2 * j_c + 1]
            left_hi, right_lo = np.minimum(hi, t_c), np.maximum(lo, t_c)
            go_l, go_r = lo < left_hi, right_lo < hi
            bl, br = b_c[go_l].copy(), b_c[go_r].copy()
            bl[np.arange(len(bl)), 2 * j_c[go_l] + 1] = left_hi[go_l]
            br[np.arange(len(br)), 2 * j_c[go_r]] = right_lo[go_r]
            parts_n += [ens.left[n_c[go_l]], ens.right[n_c[go_r]]]
            parts_b += [bl, br]
        node = np.concatenate(parts_n)
        box = np.concatenate(parts_b)
    return np.concatenate(out_node), np.concatenate(out_box)


def grid_edges(ens: TreeEnsemble, z: ArrayLike, cols: list[int]) -> list[FloatArray]:
    """Per column ``cols[j]``, the sorted distinct finite ends of the intervals of the
    leaves reachable from ``z`` when ``cols`` vary (:func:`reachable_boxes`). Two values
    ``v < v'`` of ``cols[j]`` with no edge in ``[v, v')`` fall in the same interval
    ``(lo, hi]`` of every such leaf, so the score is the same with either, whatever the
    other columns of ``cols`` are set to."""
    _, B = reachable_boxes(ens, z, cols)
    out = []
    for j in range(len(cols)):
        e = np.unique(B[:, 2 * j:2 * j + 2])
        out.append(e[np.isfinite(e)])
    return out


def grid_scores(ens: TreeEnsemble, z: ArrayLike, cols: list[int], values: list[ArrayLike]) -> FloatArray:
    """Scores of the point ``z`` with each column ``cols[j]`` set to each of ``values[j]``
    (shape ``(m_1, ..., m_k)``), exactly: :func:`column_scores` in ``k`` dimensions. Every
    tree is walked once from its root (:func:`reachable_boxes`); each leaf's value is added
    to the grid points in its box through a ``k``-dimensional difference array over the
    sorted values."""
    k = len(cols)
    vals = [np.asarray(v, dtype=np.float64).reshape(-1) for v in values]
    leaves, B = reachable_boxes(ens, z, cols)
    orders = [np.argsort(v, kind="stable") for v in vals]
    sorted_vals = [v[o] for v, o in zip(vals, orders)]
    edges = [(np.searchsorted(sv, B[:, 2 * j], side="right"), np.searchsorted(sv, B[:, 2 * j + 1], side="right"))
             for j, sv in enumerate(sorted_vals)]
    val = ens.value[leaves]
    diff = np.zeros(tuple(len(v) + 1 for v in vals))
    for corner in range(1 << k):                         # inclusion-exclusion over the box's corners
        idx = tuple(edges[j][(corner >> j) & 1] for j in range(k))
        sign = -1.0 if bin(corner).count("1") % 2 else 1.0
        np.add.at(diff, idx, sign * val)
    for axis in range(k):                                # in place: no copy of the grid per axis
        np.cumsum(diff, axis=axis, out=diff)
    grid = diff[tuple(slice(0, -1) for _ in range(k))]
    out = np.empty(tuple(len(v) for v in vals))
    out[np.ix_(*orders)] = ens.base + ens.scale * grid
    return out
