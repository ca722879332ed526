r"""Tree ensembles (decision trees, random forests, gradient boosting) as embeddings.

A :class:`TreeEnsemble` holds every tree of a model in flat node arrays. Each split node
sends an input :math:`x` left iff :math:`x_c \le t` *in float64*, where the converter has
already turned the framework's own test into this form exactly (:func:`le_threshold_f32`:
scikit-learn's ``float32(x) <= t``; :func:`lt_threshold_f32`: XGBoost's
``float32(x) < t``; LightGBM and scikit-learn's HistGradientBoosting compare float64
``x <= t`` and need nothing). The score is

.. math::

    \mathrm{score}(x) = b + s \sum_{k} v_{k,\ell_k(x)},

with :math:`\ell_k(x)` the leaf of tree :math:`k` reached by :math:`x`, :math:`v` the leaf
values, :math:`s` a global scale and :math:`b` a base score. Gradient boosting gives the
raw margin (positive iff :math:`\mathrm{score} \ge \mathrm{logit}(p)`); a forest averaging
probabilities (``averaging=True``) gives the mean probability of the positive class,
positive iff :math:`\mathrm{score} \ge p` (:meth:`TreeEnsemble.score_threshold`).

Partial evaluation
------------------
Fixing columns folds every node that splits on them into the child the fixed value
takes (GeCo, Schleich et al. 2021, §5.2); restricting inputs to a box folds every node
whose test the box decides. Both keep the score exact on the remaining inputs.

MIP formulation
---------------
Split levels (Mišić 2020, "Optimization of tree ensembles", Oper. Res. 68(5), formulation
(2); OCEAN's interval variables, Parmentier & Vidal 2021, "Optimal counterfactual
explanations in tree ensembles", ICML). After folding the trees over the input domain,
every distinct pair (column :math:`c`, threshold :math:`t`) gets an *indicator* of
":math:`x_c \le t`":

* a 0/1 column needs one level whatever its thresholds (all of them lie in
  :math:`[0, 1)` after folding): the indicator is the affine expression :math:`1 - x_c`,
  no new variable;
* another integer column snaps :math:`t` to :math:`\lfloor t\rfloor`, a continuous
  column of an integer-valued feature (``domain.grids``) to the midpoint of the two grid
  values around it (:func:`grid_threshold`; thresholds between the same two values
  merge), and another continuous column keeps :math:`t` (thresholds closer than
  :data:`MERGE_TOL` of its range share a level); each level is a
  binary :math:`y_{c,j}` with the levels of a column ordered
  :math:`t_{c,1} < \dots < t_{c,k}`, :math:`y_{c,j} \le y_{c,j+1}`, linked to the input by

  .. math::

      x_c + (u_c - t_{c,j})\, y_{c,j} \le u_c, \qquad
      x_c + (t^+_{c,j} - l_c)\, y_{c,j} \ge t^+_{c,j},

  where :math:`[l_c, u_c]` are the column's bounds and :math:`t^+` is the smallest value
  that fails the test: ``nextafter(t, +inf)`` in float64 (the converter has already
  folded the framework's float32 rounding into :math:`t`), :math:`\lfloor t\rfloor + 1`
  for an integer column. So :math:`y = 1 \Rightarrow x_c \le t` and
  :math:`y = 0 \Rightarrow x_c \ge t^+`: every decoded point takes the branch the
  model takes, with no guessed epsilon.

Per tree :math:`k` with leaves :math:`\mathcal L_k`, continuous leaf flows
:math:`w_{k,\ell} \in [0, 1]` with

.. math::

    \sum_{\ell \in \mathcal L_k} w_{k,\ell} = 1, \qquad
    \sum_{\ell \in \mathrm{left}(n)} w_{k,\ell} \le I_n, \qquad
    \sum_{\ell \in \mathrm{right}(n)} w_{k,\ell} \le 1 - I_n

for every split node :math:`n` with indicator :math:`I_n` (Mišić's constraints (2b)–(2d));
with integral indicators exactly one leaf gets flow 1, the one the input reaches. The
score is one equality row :math:`\mathrm{score} = b + s \sum_{k,\ell} v_{k,\ell}\,
w_{k,\ell}` (trees folded to one leaf go into :math:`b`); its variable is bounded by the
interval bounds :math:`b + s\sum_k [\min_\ell v_{k,\ell}, \max_\ell v_{k,\ell}]`
(:meth:`TreeEnsemble.score_bounds`), and ``lo`` adds the row :math:`\mathrm{score} \ge lo`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from groupcf.embeddings._typing import ArrayLike, FloatArray, IntArray
from groupcf.embeddings.base import Embedding, EmbeddingCapabilities
from groupcf.embeddings.split_rules import le_threshold_f32, lt_threshold_f32  # noqa: F401 (re-export)
from groupcf.embeddings.tree_constr import TreeConstr
from groupcf.embeddings.tree_delta import TreeDelta, column_scores, grid_edges, grid_scores, pair_scores
from groupcf.embeddings.tree_grid import grid_upper as tree_grid_upper
from groupcf.embeddings.tree_mip import add_ensemble
from groupcf.embeddings.tree_splits import (
    LeafCells,
    leaf_boxes,
    leaf_cells,
    node_depths,
    path_splits,
    split_points,
)
from groupcf.embeddings.tree_splits import box_upper as tree_box_upper

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.features.domain import InputDomain
    from groupcf.solvers.base import Backend

INF = math.inf

#: thresholds of one continuous column closer than this (times its range) share one
#: split level; the points strictly between them (a sliver narrower than a solver's
#: feasibility tolerance) are left out of the MIP, so every MIP point stays exact
MERGE_TOL = 1e-7


def grid_threshold(t: float, low: float, high: float) -> float:
    """For a column ``(raw - low) / (high - low)`` with integer raw values: the midpoint
    between the largest grid value with ``x <= t`` and the next one. On the grid the test
    is unchanged, and every grid value is half a step away from the new threshold, far
    beyond a solver's feasibility tolerance."""
    rng = high - low
    r = math.floor(low + t * rng)
    ks = np.arange(r - 2, r + 4, dtype=float)
    left = ks[(ks - low) / rng <= t]
    k = left.max() if len(left) else ks[0] - 1.0
    return float((k + 0.5 - low) / rng)


class TreeEnsemble(Embedding):
    """Trees in flat arrays (module docstring). Nodes of all trees are concatenated;
    ``feature < 0`` marks a leaf, ``left``/``right`` are global node indices,
    ``roots[k]`` is tree ``k``'s root. A node goes left iff ``x[feature] <= threshold``.

    ``averaging=True``: the score is a mean probability (``proba`` returns it, the
    threshold is ``p`` itself); else it is a logit (``proba`` is its sigmoid).
    """

    capabilities = EmbeddingCapabilities(leaf_cells=True)

    def __init__(self, n_inputs: int, feature: ArrayLike, threshold: ArrayLike, left: ArrayLike, right: ArrayLike,
                 value: ArrayLike, roots: ArrayLike, scale: float = 1.0, base: float = 0.0, averaging: bool = False,
                 name: str = "trees") -> None:
        self._n = int(n_inputs)
        self.feature = np.asarray(feature, dtype=np.int64)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left = np.asarray(left, dtype=np.int64)
        self.right = np.asarray(right, dtype=np.int64)
        self.value = np.asarray(value, dtype=np.float64)
        self.roots = np.asarray(roots, dtype=np.int64)
        self.scale, self.base = float(scale), float(base)
        self.averaging, self.name = bool(averaging), name
        split = self.feature >= 0
        if split.any() and (self.feature[split].max() >= self._n):
            raise ValueError(f"a split uses column {self.feature.max()}, the model has {self._n} inputs")
        self.depth = self._depth()
        self._splits: list[FloatArray] | None = None     # split_points(), cached
        self._cells: LeafCells | None = None              # leaf_cells(), cached

    def _depth(self) -> int:
        """The deepest root-to-leaf path; checks on the way that tree ``k``'s nodes lie in
        ``[roots[k], roots[k + 1])`` (the last tree: up to the end), which the leaf cells and
        the pruning rely on to tell a node's tree by its index."""
        ends = np.append(self.roots[1:], len(self.feature))
        if np.any(ends <= self.roots):
            raise ValueError("roots must be increasing node indices: each tree's nodes are one "
                             "block, in tree order")
        depth, frontier, tree = 0, self.roots, np.arange(len(self.roots))
        while len(frontier):
            outside = (frontier < self.roots[tree]) | (frontier >= ends[tree])
            if outside.any():
                bad = int(tree[outside][0])
                raise ValueError(f"tree {bad} reaches a node outside its block [roots[{bad}], "
                                 f"roots[{bad + 1}]): each tree's nodes must be contiguous")
            keep = self.feature[frontier] >= 0
            frontier, tree = frontier[keep], tree[keep]
            if not len(frontier):
                break
            frontier = np.concatenate([self.left[frontier], self.right[frontier]])
            tree = np.concatenate([tree, tree])
            depth += 1
        return depth

    @property
    def n_inputs(self) -> int:
        return self._n

    @property
    def n_trees(self) -> int:
        return len(self.roots)

    def __repr__(self) -> str:
        kind = "probability average" if self.averaging else "margin"
        return (f"TreeEnsemble({self.name}: {self.n_trees} trees, depth {self.depth}, "
                f"{int(np.sum(self.feature < 0))} leaves, inputs={self._n}, {kind})")

    # -- numpy evaluation ---------------------------------------------------------------
    def apply(self, Z: ArrayLike) -> IntArray:
        """Global index of the leaf each row reaches in each tree, shape ``(m, n_trees)``."""
        P = self._check_points(Z)
        m = len(P)
        idx: IntArray = np.tile(self.roots, m)          # row-major (m, n_trees), flat
        rows = np.repeat(np.arange(m), self.n_trees)
        live = np.flatnonzero(self.feature[idx] >= 0)   # (row, tree) pairs not yet at a leaf
        while len(live):
            n = idx[live]
            go_left = P[rows[live], self.feature[n]] <= self.threshold[n]
            n = np.where(go_left, self.left[n], self.right[n])
            idx[live] = n
            live = live[self.feature[n] >= 0]            # pairs at a leaf are not walked again
        return idx.reshape(m, self.n_trees)

    def score(self, Z: ArrayLike) -> FloatArray:
        s: FloatArray = self.base + self.scale * self.value[self.apply(Z)].sum(axis=1)
        return s

    def score_to_proba(self, s: ArrayLike) -> FloatArray:
        return np.asarray(s, dtype=np.float64) if self.averaging else super().score_to_proba(s)

    def score_threshold(self, p: float) -> float:
        """The score from which the model predicts positive at probability ``p``."""
        return float(p) if self.averaging else math.log(p / (1.0 - p))

    def predict(self, Z: ArrayLike, threshold: float | None = None) -> IntArray:
        t = self.score_threshold(0.5) if threshold is None else threshold
        return (self.score(Z) >= t).astype(np.int64)

    def split_points(self) -> list[FloatArray]:
        """Per input column, the sorted distinct thresholds splitting on it (cached)."""
        if self._splits is None:
            self._splits = split_points(self)
        return self._splits

    def box_upper(self, lb: ArrayLike, ub: ArrayLike) -> FloatArray:
        """Per box, the base plus the scaled sum over trees of the largest leaf value whose
        cell meets the box (:func:`groupcf.embeddings.tree_splits.box_upper`)."""
        if self._cells is None:
            self._cells = leaf_cells(self)
        return tree_box_upper(self, self._cells, lb, ub)

    def path_splits(self, z: ArrayLike) -> tuple[IntArray, FloatArray]:
        """``(columns, thresholds)`` of the split nodes on the paths of the point ``z``."""
        return path_splits(self, z)

    def column_scores(self, z: ArrayLike, c: int, values: ArrayLike) -> FloatArray:
        """Scores of ``z`` with column ``c`` set to each of ``values``: one walk of the
        leaves reachable along the column (:func:`groupcf.embeddings.tree_delta.column_scores`)."""
        return column_scores(self, z, c, values)

    def pair_scores(self, z: ArrayLike, c1: int, values1: ArrayLike, c2: int, values2: ArrayLike) -> FloatArray:
        """Scores of ``z`` with columns ``c1`` and ``c2`` set to every pair of ``values1`` x
        ``values2``: one walk of the leaves reachable when the two columns vary
        (:func:`groupcf.embeddings.tree_delta.pair_scores`)."""
        return pair_scores(self, z, c1, values1, c2, values2)

    def grid_scores(self, z: ArrayLike, cols: list[int], values: list[ArrayLike]) -> FloatArray:
        """Scores of ``z`` with each of ``cols`` set to each of its ``values`` (the product
        grid): one walk of the leaves reachable when those columns vary
        (:func:`groupcf.embeddings.tree_delta.grid_scores`)."""
        return grid_scores(self, z, cols, values)

    def grid_edges(self, z: ArrayLike, cols: list[int]) -> list[FloatArray]:
        """Per column of ``cols``, the ends of the intervals of the leaves reachable from
        ``z`` when ``cols`` vary (:func:`groupcf.embeddings.tree_delta.grid_edges`)."""
        return grid_edges(self, z, cols)

    def grid_upper(self, z: ArrayLike, groups: list[tuple[ArrayLike, ArrayLike, ArrayLike]],
                   budget: float) -> float:
        """Per tree, the best leaf reachable when the groups' columns vary that holds a
        point of the grid costing less than ``budget``, summed
        (:func:`groupcf.embeddings.tree_grid.grid_upper`)."""
        return tree_grid_upper(self, np.asarray(z, dtype=np.float64), [
            (np.asarray(c, dtype=np.int64), np.asarray(v, dtype=np.float64), np.asarray(w, dtype=np.float64))
            for c, v, w in groups], budget)

    def delta_evaluator(self, z0: ArrayLike) -> TreeDelta:
        """Scores of points equal to ``z0`` except on a few columns: only the trees whose
        path of ``z0`` tests a changed column are walked, each from the first such node
        (:mod:`groupcf.embeddings.tree_delta`)."""
        return TreeDelta(self, z0)

    # -- folding ------------------------------------------------------------------------
    def _fold(self, direction: IntArray, remap: IntArray | None, n_inputs: int,
              extra_base: float = 0.0) -> TreeEnsemble:
        """Ensemble where each node with ``direction`` 0 / 1 is replaced by its left /
        right child (``-1``: kept); columns renumbered by ``remap``. The kept nodes are
        numbered in depth-first preorder (left first), tree after tree (vectorised: one
        pass per level)."""
        res = np.arange(len(self.feature))
        while True:                       # each node -> the first kept node below it
            d = direction[res]
            act = np.flatnonzero(d >= 0)
            if not len(act):
                break
            r = res[act]
            res[act] = np.where(d[act] == 0, self.left[r], self.right[r])
        levels: list[tuple[IntArray, IntArray, IntArray]] = []
        frontier = res[self.roots]
        while len(frontier):
            sp = frontier[self.feature[frontier] >= 0]
            kids = (res[self.left[sp]], res[self.right[sp]])
            levels.append((sp, *kids))
            frontier = np.concatenate(kids)
        size = np.ones(len(self.feature), dtype=np.int64)
        for sp, a, b in reversed(levels):
            size[sp] = 1 + size[a] + size[b]
        tops = res[self.roots]
        pos = np.zeros(len(self.feature), dtype=np.int64)
        pos[tops] = np.cumsum(size[tops]) - size[tops]
        for sp, a, b in levels:
            pos[a] = pos[sp] + 1
            pos[b] = pos[sp] + 1 + size[a]
        total = int(size[tops].sum())
        kept = np.concatenate([tops] + [np.concatenate([a, b]) for _, a, b in levels]) if levels else tops
        at = pos[kept]
        feat = np.full(total, -1, dtype=np.int64)
        thr, val = np.zeros(total), np.zeros(total)
        lft, rgt = np.full(total, -1, dtype=np.int64), np.full(total, -1, dtype=np.int64)
        f = self.feature[kept]
        feat[at] = np.where(f >= 0, f if remap is None else remap[np.maximum(f, 0)], -1)
        thr[at], val[at] = self.threshold[kept], self.value[kept]
        for sp, a, b in levels:
            lft[pos[sp]], rgt[pos[sp]] = pos[a], pos[b]
        return TreeEnsemble(n_inputs, feat, thr, lft, rgt, val, pos[tops], self.scale,
                            self.base + extra_base, self.averaging, self.name)

    def partial(self, fixed_idx: ArrayLike, fixed_values: ArrayLike) -> TreeEnsemble:
        """Fold every node splitting on a fixed column (GeCo §5.2); the remaining columns
        keep their order."""
        idx = np.asarray(fixed_idx, dtype=np.int64).reshape(-1)
        values = np.asarray(fixed_values, dtype=np.float64).reshape(-1)
        if idx.shape != values.shape:
            raise ValueError(f"{len(idx)} indices but {len(values)} values")
        if len(idx) and (idx.min() < 0 or idx.max() >= self._n):
            raise ValueError(f"fixed indices must lie in [0, {self._n})")
        if len(np.unique(idx)) != len(idx):
            raise ValueError("fixed indices must be distinct")
        keep = np.ones(self._n, dtype=bool)
        keep[idx] = False
        remap = np.cumsum(keep) - 1
        vals = np.zeros(self._n)
        vals[idx] = values
        split = self.feature >= 0
        f = np.where(split, self.feature, 0)
        direction = np.where(split & ~keep[f], (vals[f] > self.threshold).astype(np.int64), -1)
        return self._fold(direction, remap, int(keep.sum()))

    def restrict(self, lb: ArrayLike, ub: ArrayLike) -> TreeEnsemble:
        """Fold every node whose test is decided on the box ``[lb, ub]`` (same inputs)."""
        low = np.broadcast_to(np.asarray(lb, dtype=np.float64), (self._n,))
        up = np.broadcast_to(np.asarray(ub, dtype=np.float64), (self._n,))
        split = self.feature >= 0
        f = np.where(split, self.feature, 0)
        direction = np.full(len(self.feature), -1, dtype=np.int64)
        direction[split & (up[f] <= self.threshold)] = 0
        direction[split & (low[f] > self.threshold)] = 1
        return self._fold(direction, None, self._n)

    def prune(self, lb: ArrayLike, ub: ArrayLike, cell_distance: Callable[[FloatArray, FloatArray], FloatArray],
              bound: float, chunk: int = 2_000_000) -> TreeEnsemble:
        """The ensemble folded over the box ``[lb, ub]`` without the leaves whose cell lies
        farther than ``bound``: ``cell_distance(lo, hi)`` bounds from below the distance of
        every input in each leaf cell (rows of column bounds); a split node with one child
        whose leaves are all gone is replaced by the other child. Exact at every input of
        the box within ``bound`` (each tree's leaf of such an input is kept, so its path is
        unchanged); farther inputs may be scored as a kept neighbour — only a search
        restricted to distances ``<= bound`` may use it. Unchanged when a tree would lose
        every leaf."""
        low = np.broadcast_to(np.asarray(lb, dtype=np.float64), (self._n,))
        up = np.broadcast_to(np.asarray(ub, dtype=np.float64), (self._n,))
        folded = self.restrict(low, up)
        leaves = np.flatnonzero(folded.feature < 0)
        d = np.empty(len(leaves))
        step = max(1, chunk // max(self._n, 1))
        for a in range(0, len(leaves), step):
            d[a:a + step] = cell_distance(*leaf_boxes(folded, leaves[a:a + step], low, up))
        alive = np.zeros(len(folded.feature), dtype=bool)
        alive[leaves] = d <= bound + 1e-9 * max(1.0, abs(bound))
        split = np.flatnonzero(folded.feature >= 0)
        depth = node_depths(folded)
        for level in range(int(depth.max(initial=0)), -1, -1):   # children before parents
            at = split[depth[split] == level]
            alive[at] = alive[folded.left[at]] | alive[folded.right[at]]
        if not alive[folded.roots].all():
            return folded
        direction = np.full(len(folded.feature), -1, dtype=np.int64)
        direction[split[~alive[folded.left[split]]]] = 1
        direction[split[~alive[folded.right[split]]]] = 0
        return folded._fold(direction, None, self._n)

    def score_bounds(self, lb: ArrayLike, ub: ArrayLike) -> tuple[float, float]:
        """Interval bounds of the score over the box ``[lb, ub]``: per tree (folded over
        the box) its smallest and largest reachable leaf value."""
        folded = self.restrict(lb, ub)
        leaves = np.flatnonzero(folded.feature < 0)
        tree = np.searchsorted(folded.roots, leaves, side="right") - 1    # each tree one block (checked in __init__)
        v_lo, v_hi = np.full(folded.n_trees, INF), np.full(folded.n_trees, -INF)
        np.minimum.at(v_lo, tree, folded.value[leaves])
        np.maximum.at(v_hi, tree, folded.value[leaves])
        lo, hi = float(v_lo.sum()), float(v_hi.sum())
        s = self.scale
        return (folded.base + min(s * lo, s * hi), folded.base + max(s * lo, s * hi))

    # -- MIP formulation --------------------------------------------------------------
    def add_to(self, backend: Backend, x_idx: ArrayLike, domain: InputDomain,
               lo: float | None = None) -> TreeConstr:
        """Add the ensemble to ``backend`` (formulation in the module docstring; rows
        assembled by :func:`groupcf.embeddings.tree_mip.add_ensemble`)."""
        inputs = np.asarray(x_idx, dtype=np.int64).reshape(-1)
        if len(inputs) != self._n:
            raise ValueError(f"{len(inputs)} input variables for a model with {self._n} inputs")
        return add_ensemble(self, backend, inputs, domain, lo, MERGE_TOL)
