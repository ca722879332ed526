"""The MIP rows of a tree ensemble (:meth:`TreeEnsemble.add_to
<groupcf.embeddings.trees.TreeEnsemble.add_to>`; formulation in
:mod:`groupcf.embeddings.trees`), assembled with array operations: an ensemble of
hundreds of deep trees has hundreds of thousands of nodes, one pair of rows each.

The ensemble is first folded over the input domain
(:meth:`~groupcf.embeddings.trees.TreeEnsemble.restrict`), which numbers its nodes in
depth-first preorder, tree after tree. Then a tree's leaves are contiguous and in
left-to-right order, and the leaves of a split node's left subtree are those numbered
from its left child up to its right child, those of its right subtree from its right
child up to the end of its subtree (its rightmost leaf, found by following right
children).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from groupcf.embeddings._typing import ArrayLike, BoolArray, FloatArray, IntArray
from groupcf.embeddings.tree_constr import TreeConstr

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.trees import TreeEnsemble
    from groupcf.features.domain import InputDomain
    from groupcf.solvers.base import Backend

INF = math.inf


def _ranges(starts: IntArray, stops: IntArray) -> tuple[IntArray, IntArray]:
    """``(which, values)``: the concatenation of ``range(starts[i], stops[i])`` and the
    ``i`` each value comes from."""
    n = np.maximum(stops - starts, 0)
    which = np.repeat(np.arange(len(n)), n)
    offsets = np.cumsum(n) - n
    return which, np.arange(int(n.sum())) - np.repeat(offsets, n) + np.repeat(starts, n)


def grid_thresholds(t: ArrayLike, low: float, high: float) -> FloatArray:
    """:func:`~groupcf.embeddings.trees.grid_threshold` of each of ``t`` (vectorised): the
    midpoint between the largest grid value with ``x <= t`` and the next one."""
    rng = high - low
    ks = np.floor(low + np.asarray(t, float) * rng)[:, None] + np.arange(-2.0, 4.0)[None, :]
    ok = (ks - low) / rng <= np.asarray(t, float)[:, None]
    k = np.where(ok.any(axis=1), np.where(ok, ks, -INF).max(axis=1), ks[:, 0] - 1.0)
    out: FloatArray = (k + 0.5 - low) / rng
    return out


def _levels(folded: TreeEnsemble, split: BoolArray, lb: FloatArray, ub: FloatArray, integer: BoolArray,
            binary: BoolArray, grids: Mapping[int, tuple[float, float]], merge_tol: float,
            ) -> tuple[IntArray, FloatArray, FloatArray, IntArray]:
    """The split levels: per level its column, threshold (the smallest of the merged
    ones), ``t+`` (the smallest value above the largest), and per split node its level
    (``-1`` for a binary column, whose indicator is ``1 - x``)."""
    nodes = np.flatnonzero(split)
    c = folded.feature[nodes]
    t = folded.threshold[nodes].copy()
    t[integer[c]] = np.floor(t[integer[c]])
    for gcol, (low, high) in grids.items():
        at = np.flatnonzero(c == int(gcol))
        if len(at):
            t[at] = grid_thresholds(folded.threshold[nodes[at]], low, high)
    level = np.full(len(nodes), -1, dtype=np.int64)
    real = ~binary[c]
    if not real.any():
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0), level
    pairs, inv = np.unique(np.column_stack([c[real].astype(float), t[real]]), axis=0, return_inverse=True)
    # one level per group of a column's thresholds closer than merge_tol (its range):
    # y = 1 => x <= smallest, y = 0 => x >= the next value above the largest
    keys: list[list[Any]] = []      # [column, smallest threshold, largest threshold]
    of_pair = np.empty(len(pairs), dtype=np.int64)
    for j, (cj, tj) in enumerate(pairs):
        cj = int(cj)
        width = merge_tol * max(ub[cj] - lb[cj], 1.0)
        if keys and keys[-1][0] == cj and not integer[cj] and tj - keys[-1][1] <= width:
            keys[-1][2] = tj
        else:
            keys.append([cj, tj, tj])
        of_pair[j] = len(keys) - 1
    level[real] = of_pair[inv.reshape(-1)]
    col = np.array([k[0] for k in keys], dtype=np.int64)
    thr = np.array([k[1] for k in keys], dtype=float)
    top = np.array([k[2] for k in keys], dtype=float)
    up = np.where(integer[col], top + 1.0, np.nextafter(top, INF))
    return col, thr, up, level


def add_ensemble(ens: TreeEnsemble, backend: Backend, x_idx: IntArray, domain: InputDomain,
                 lo: float | None, merge_tol: float) -> TreeConstr:
    """Add ``ens`` to ``backend`` (module docstring); see ``TreeEnsemble.add_to``."""
    from groupcf.solvers.base import VarType

    lb, ub = np.asarray(domain.lb, float), np.asarray(domain.ub, float)
    folded = ens.restrict(lb, ub)
    split = folded.feature >= 0
    if np.any(~np.isfinite(lb[folded.feature[split]]) | ~np.isfinite(ub[folded.feature[split]])):
        raise ValueError("every column a tree splits on needs finite bounds in the domain")
    integer = np.asarray(domain.integer, dtype=bool)
    binary = integer & (lb >= 0.0) & (ub <= 1.0)
    grids = getattr(domain, "grids", None) or {}
    level_col, level_thr, level_up, node_level = _levels(folded, split, lb, ub, integer, binary, grids, merge_tol)
    levels = np.asarray(backend.add_vars(len(level_col), lb=0.0, ub=1.0, vtype=VarType.BINARY),
                        dtype=np.int64) if len(level_col) else np.zeros(0, dtype=np.int64)
    R: list[IntArray] = []
    C: list[IntArray] = []
    V: list[FloatArray] = []
    LO: list[FloatArray] = []
    HI: list[FloatArray] = []
    n_rows = 0

    def rows(which: ArrayLike, cols: ArrayLike, coefs: ArrayLike, lo_: ArrayLike, hi_: ArrayLike) -> None:
        """Rows ``n_rows + which`` (one per entry of ``lo_``) with entries ``cols``/``coefs``."""
        nonlocal n_rows
        R.append(n_rows + np.asarray(which, dtype=np.int64))
        C.append(np.asarray(cols, dtype=np.int64))
        V.append(np.asarray(coefs, dtype=float))
        LO.append(np.broadcast_to(np.asarray(lo_, dtype=float), (len(np.atleast_1d(lo_)),)))
        HI.append(np.broadcast_to(np.asarray(hi_, dtype=float), LO[-1].shape))
        n_rows += len(LO[-1])

    k = len(level_col)
    if k:
        xv, y, u, lc = x_idx[level_col], levels, ub[level_col], lb[level_col]
        two = np.repeat(np.arange(k), 2)
        rows(two, np.column_stack([xv, y]).ravel(), np.column_stack([np.ones(k), u - level_thr]).ravel(),
             np.full(k, -INF), u)                                        # y = 1 => x <= t
        rows(two, np.column_stack([xv, y]).ravel(), np.column_stack([np.ones(k), level_up - lc]).ravel(),
             level_up, np.full(k, INF))                                  # y = 0 => x >= t+
        nxt = np.flatnonzero(level_col[:-1] == level_col[1:])
        if len(nxt):                                                     # ordered levels
            m = len(nxt)
            rows(np.repeat(np.arange(m), 2), np.column_stack([levels[nxt], levels[nxt + 1]]).ravel(),
                 np.tile([1.0, -1.0], m), np.full(m, -INF), np.zeros(m))
    # leaves: preorder numbering makes each tree's leaves contiguous, left to right
    is_leaf = ~split
    leaves = np.flatnonzero(is_leaf)
    tree = np.searchsorted(folded.roots, leaves, side="right") - 1
    n_per_tree = np.bincount(tree, minlength=folded.n_trees)
    multi = n_per_tree[tree] > 1
    const = float(folded.value[leaves[~multi]].sum())
    w = np.asarray(backend.add_vars(int(multi.sum()), lb=0.0, ub=1.0), dtype=np.int64) \
        if multi.any() else np.zeros(0, dtype=np.int64)
    var_of_rank = np.full(len(leaves), -1, dtype=np.int64)
    var_of_rank[multi] = w
    trees = np.unique(tree[multi])
    which = np.searchsorted(trees, tree[multi])
    rows(which, w, np.ones(len(w)), np.ones(len(trees)), np.ones(len(trees)))   # sum_leaf w = 1
    nodes = np.flatnonzero(split)
    if len(nodes):
        rank: IntArray = np.cumsum(is_leaf) - is_leaf                  # leaves numbered before each node
        last = folded.right[nodes]
        while True:                                          # the rightmost leaf of each subtree
            inner = folded.feature[last] >= 0
            if not inner.any():
                break
            last[inner] = folded.right[last[inner]]
        a, b, e = rank[folded.left[nodes]], rank[folded.right[nodes]], rank[last] + 1
        c = folded.feature[nodes]
        bin_node = binary[c]
        ind = np.where(bin_node, x_idx[c], levels[np.maximum(node_level, 0)] if len(levels) else x_idx[c])
        m = len(nodes)
        # left subtree: sum w <= I (binary: I = 1 - x, else y); right subtree: sum w <= 1 - I
        for (s0, s1), sign_bin, sign_lvl, hi_bin, hi_lvl in (((a, b), 1.0, -1.0, 1.0, 0.0),
                                                             ((b, e), -1.0, 1.0, 0.0, 1.0)):
            wi, wv = _ranges(s0, s1)
            rows(np.concatenate([wi, np.arange(m)]), np.concatenate([var_of_rank[wv], ind]),
                 np.concatenate([np.ones(len(wv)), np.where(bin_node, sign_bin, sign_lvl)]),
                 np.full(m, -INF), np.where(bin_node, hi_bin, hi_lvl))
    s_lo, s_hi = folded.score_bounds(lb, ub)
    score = int(backend.add_vars(1, lb=s_lo - 1e-9 * (1 + abs(s_lo)), ub=s_hi + 1e-9 * (1 + abs(s_hi)))[0])
    all_l = leaves[multi]
    b0 = folded.base + folded.scale * const
    rows(np.zeros(len(w) + 1, dtype=np.int64), np.concatenate([[score], w]),
         np.concatenate([[1.0], -folded.scale * folded.value[all_l]]), [b0], [b0])
    lo_row = None
    if lo is not None:
        lo_row = n_rows
        rows([0], [score], [1.0], [float(lo)], [INF])
    A = sp.csr_matrix((np.concatenate(V), (np.concatenate(R), np.concatenate(C))), shape=(n_rows, backend.num_vars))
    added = np.asarray(backend.add_rows(A, np.concatenate(LO), np.concatenate(HI)), dtype=np.int64)
    return TreeConstr(embedding=ens, inputs=x_idx, score=score, rows=added,
                      lo_row=None if lo_row is None else int(added[lo_row]),
                      folded=folded, levels=levels, level_col=level_col, level_thr=level_thr,
                      leaf_vars=w, leaf_nodes=all_l, level_up=level_up, lb=lb, ub=ub, leaf_tree=tree[multi])
