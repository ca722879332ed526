r"""A compiled walk for :class:`~groupcf.embeddings.tree_delta.TreeDelta` (optional: numba).

:meth:`TreeDelta.score_rows <groupcf.embeddings.tree_delta.TreeDelta.score_rows>` walks
every (candidate, affected tree) pair from the first node of :math:`z^0`'s path testing a
changed column. In numpy that walk is a loop over depth of gathers over all pairs
(sorted by start level so that each level steps only the pairs that have started). With
`numba <https://numba.pydata.org>`_ installed (the ``fast`` extra) the same walk is
compiled (:func:`_rows_delta`: tree by tree, each tree's pairs stepped level by level), with
the same start nodes, the same comparisons and the same summation order (per row, in tree
order, :math:`v_{k,\ell_k(z)} - v_{k,\ell_k(z^0)}` added to a running sum that starts at
0), so both give bit-identical scores; the tests check this. Without numba,
:data:`COMPILED` is False and the numpy walk is used. numba is imported only when a tree
ensemble is first walked, so ``import groupcf`` does not pay for it.

numba is the maintained way to compile such a loop from Python without a C extension to
build and ship; scikit-learn's own compiled traversal (``tree_.apply``) walks every tree
from its root, one Python call per tree, which is slower here than the partial numpy walk.
"""
from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable

import numpy as np

from groupcf.embeddings._typing import FloatArray


def node_table(feature: np.ndarray, threshold: FloatArray, left: np.ndarray,
               right: np.ndarray) -> tuple[np.ndarray, FloatArray]:
    """The compiled walk's tables: ``(nodes, thr)``, ``nodes[j] = (column, right, left)``
    (uint32: with unsigned indices numba adds no check for negative ones) and ``thr[j]`` the
    threshold; a leaf tests column 0 against +inf and is its own child both ways, so a walk
    that reaches it stays there."""
    leaf = feature < 0
    own = np.arange(len(feature))
    nodes = np.stack([np.where(leaf, 0, feature), np.where(leaf, own, right), np.where(leaf, own, left)], axis=1)
    return np.ascontiguousarray(nodes, dtype=np.uint32), np.where(leaf, np.inf, threshold).astype(np.float64)


def _rows_delta(P: FloatArray, masks: np.ndarray, inv: np.ndarray, first_t: np.ndarray,
                path_nodes: np.ndarray, nodes: np.ndarray, thr: FloatArray, value: FloatArray,
                leaf_value: FloatArray) -> FloatArray:  # pragma: no cover - compiled
    """Per row ``i`` of ``P``, whose changed columns are ``masks[inv[i]]``: the sum over the
    trees ``k`` (in order) whose start level ``d = min_{c : masks[inv[i], c]} first_t[k, c]``
    is a level of the path (``< path_nodes.shape[1]``) of ``value[j] - leaf_value[k]``, ``j``
    reached from ``path_nodes[k, d]`` by ``depth - d`` steps
    ``j = nodes[j, 1 + (P[i, nodes[j, 0]] <= thr[j])]`` (the tables of :func:`node_table`).

    The start levels are computed once per distinct mask and tree, not per row: GeCo's
    candidates share a few changed-feature sets, and a one-hot feature changes many columns.

    Trees are the outer loop, so a tree's nodes stay in cache while every row walks it;
    within a tree the rows are ordered by start level (a counting sort) and stepped level
    by level, the prefix that has started at each level: the steps of different rows are
    independent loads with no branch to mispredict (a loop per row that stops at its leaf
    measured 2.4 times slower). Each row's sum adds its trees in order, as the numpy
    walk's."""
    m = P.shape[0]
    U, n = masks.shape
    T = first_t.shape[0]
    none = np.uint32(path_nodes.shape[1])
    # the changed columns of each distinct mask (CSR)
    ptr = np.zeros(U + 1, dtype=np.uint32)
    for u in range(U):
        ptr[u + 1] = ptr[u] + masks[u].sum()
    cols = np.empty(ptr[U], dtype=np.uint32)
    for u in range(U):
        j = ptr[u]
        for c in range(n):
            if masks[u, c]:
                cols[j] = c
                j += 1
    out = np.zeros(m)
    # unsigned indices throughout: numba adds no wraparound for negative indices (0.61-0.73
    # of the time with signed ones, BENCHMARKS.md)
    lev_u = np.empty(U, dtype=np.uint32)
    lev = np.empty(m, dtype=np.uint32)
    rows = np.empty(m, dtype=np.uint32)
    at = np.empty(m, dtype=np.uint32)
    ends = np.zeros(none + 1, dtype=np.uint32)
    for k in range(T):
        fk = first_t[k]
        ends[:] = 0
        for u in range(U):
            d = none
            for j in range(ptr[u], ptr[u + 1]):
                f = np.uint32(fk[cols[j]])
                if f < d:
                    d = f
            lev_u[u] = d
        for i in range(m):
            d = lev_u[inv[i]]
            lev[i] = d
            ends[d + np.uint32(1)] += 1
        for d in range(none):
            ends[d + 1] += ends[d]                     # ends[d]: rows starting above level d
        pos = ends.copy()
        for i in range(m):
            d = lev[i]
            if d < none:
                p = pos[d]
                pos[d] = p + np.uint32(1)
                rows[p] = np.uint32(i)
                at[p] = np.uint32(path_nodes[k, d])
        for d in range(none - 1):
            for p in range(ends[d + 1]):               # the rows that start at or above level d
                j = at[p]
                at[p] = nodes[j, np.uint32(1) + np.uint32(P[rows[p], nodes[j, np.uint32(0)]] <= thr[j])]
        base = leaf_value[k]
        for p in range(ends[none]):
            out[rows[p]] += value[at[p]] - base
    return out


def _numba_installed() -> bool:
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):     # a blocked module (``sys.modules["numba"] = None``)
        return False


#: whether numba is installed (checked without importing it: numba is imported, and the walk
#: compiled or loaded from numba's cache, on the first :func:`compiled_rows_delta`)
COMPILED = _numba_installed()
_JIT: list[Callable[..., FloatArray]] = []


def compiled_rows_delta() -> Callable[..., FloatArray] | None:
    """:func:`_rows_delta` compiled by numba, or None when numba is not installed or does not
    import (then a warning says so once, and the numpy walk is used)."""
    global COMPILED
    if not _JIT and COMPILED:
        try:
            from numba import njit
        except ImportError as exc:          # e.g. a numba built for another numpy
            COMPILED = False
            warnings.warn(f"numba is installed but does not import ({exc}); tree ensembles are walked "
                          "with numpy, slower", RuntimeWarning, stacklevel=3)
            return None
        _JIT.append(njit(cache=True, nogil=True)(_rows_delta))
    return _JIT[0] if _JIT else None
