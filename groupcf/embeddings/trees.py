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
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from groupcf.embeddings.base import Embedding, EmbeddingCapabilities
from groupcf.embeddings.split_rules import le_threshold_f32, lt_threshold_f32  # noqa: F401 (re-export)
from groupcf.embeddings.tree_constr import TreeConstr
from groupcf.embeddings.tree_delta import TreeDelta
from groupcf.embeddings.tree_splits import path_splits, split_points

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

    def __init__(self, n_inputs: int, feature, threshold, left, right, value, roots,
                 scale: float = 1.0, base: float = 0.0, averaging: bool = False, name: str = "trees"):
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

    def _depth(self) -> int:
        depth, frontier = 0, self.roots
        while len(frontier):
            frontier = frontier[self.feature[frontier] >= 0]
            if not len(frontier):
                break
            frontier = np.concatenate([self.left[frontier], self.right[frontier]])
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
    def apply(self, Z) -> np.ndarray:
        """Global index of the leaf each row reaches in each tree, shape ``(m, n_trees)``."""
        Z = self._check_points(Z)
        m = len(Z)
        idx = np.tile(self.roots, m)                    # row-major (m, n_trees), flat
        rows = np.repeat(np.arange(m), self.n_trees)
        live = np.flatnonzero(self.feature[idx] >= 0)   # (row, tree) pairs not yet at a leaf
        while len(live):
            n = idx[live]
            go_left = Z[rows[live], self.feature[n]] <= self.threshold[n]
            n = np.where(go_left, self.left[n], self.right[n])
            idx[live] = n
            live = live[self.feature[n] >= 0]            # pairs at a leaf are not walked again
        return idx.reshape(m, self.n_trees)

    def score(self, Z) -> np.ndarray:
        return self.base + self.scale * self.value[self.apply(Z)].sum(axis=1)

    def score_to_proba(self, s) -> np.ndarray:
        return np.asarray(s, dtype=float) if self.averaging else super().score_to_proba(s)

    def score_threshold(self, p: float) -> float:
        """The score from which the model predicts positive at probability ``p``."""
        return float(p) if self.averaging else math.log(p / (1.0 - p))

    def predict(self, Z, threshold: float | None = None) -> np.ndarray:
        t = self.score_threshold(0.5) if threshold is None else threshold
        return (self.score(Z) >= t).astype(np.int64)

    def split_points(self) -> list[np.ndarray]:
        """Per input column, the sorted distinct thresholds splitting on it (cached)."""
        if getattr(self, "_splits", None) is None:
            self._splits = split_points(self)
        return self._splits

    def path_splits(self, z) -> tuple[np.ndarray, np.ndarray]:
        """``(columns, thresholds)`` of the split nodes on the paths of the point ``z``."""
        return path_splits(self, z)

    def delta_evaluator(self, z0) -> TreeDelta:
        """Scores of points equal to ``z0`` except on a few columns: only the trees whose
        path of ``z0`` tests a changed column are walked, each from the first such node
        (:mod:`groupcf.embeddings.tree_delta`)."""
        return TreeDelta(self, z0)

    # -- folding ------------------------------------------------------------------------
    def _fold(self, direction: np.ndarray, remap: np.ndarray | None, n_inputs: int,
              extra_base: float = 0.0) -> TreeEnsemble:
        """Ensemble where each node with ``direction`` 0 / 1 is replaced by its left /
        right child (``-1``: kept); columns renumbered by ``remap``."""
        feat, thr, lft, rgt, val, roots = [], [], [], [], [], []

        def emit(n: int) -> int:
            while direction[n] >= 0:
                n = self.left[n] if direction[n] == 0 else self.right[n]
            k = len(feat)
            leaf = self.feature[n] < 0
            feat.append(-1 if leaf else (self.feature[n] if remap is None else remap[self.feature[n]]))
            thr.append(self.threshold[n])
            val.append(self.value[n])
            lft.append(-1)
            rgt.append(-1)
            if not leaf:
                lft[k] = emit(self.left[n])
                rgt[k] = emit(self.right[n])
            return k

        for r in self.roots:
            roots.append(emit(int(r)))
        return TreeEnsemble(n_inputs, feat, thr, lft, rgt, val, roots, self.scale,
                            self.base + extra_base, self.averaging, self.name)

    def partial(self, fixed_idx: Sequence[int], fixed_values: Sequence[float]) -> TreeEnsemble:
        """Fold every node splitting on a fixed column (GeCo §5.2); the remaining columns
        keep their order."""
        fixed_idx = np.asarray(fixed_idx, dtype=np.int64).reshape(-1)
        fixed_values = np.asarray(fixed_values, dtype=float).reshape(-1)
        if fixed_idx.shape != fixed_values.shape:
            raise ValueError(f"{len(fixed_idx)} indices but {len(fixed_values)} values")
        if len(fixed_idx) and (fixed_idx.min() < 0 or fixed_idx.max() >= self._n):
            raise ValueError(f"fixed indices must lie in [0, {self._n})")
        if len(np.unique(fixed_idx)) != len(fixed_idx):
            raise ValueError("fixed indices must be distinct")
        keep = np.ones(self._n, dtype=bool)
        keep[fixed_idx] = False
        remap = np.cumsum(keep) - 1
        vals = np.zeros(self._n)
        vals[fixed_idx] = fixed_values
        split = self.feature >= 0
        f = np.where(split, self.feature, 0)
        direction = np.where(split & ~keep[f], (vals[f] > self.threshold).astype(np.int64), -1)
        return self._fold(direction, remap, int(keep.sum()))

    def restrict(self, lb, ub) -> TreeEnsemble:
        """Fold every node whose test is decided on the box ``[lb, ub]`` (same inputs)."""
        lb = np.broadcast_to(np.asarray(lb, dtype=float), (self._n,))
        ub = np.broadcast_to(np.asarray(ub, dtype=float), (self._n,))
        split = self.feature >= 0
        f = np.where(split, self.feature, 0)
        direction = np.full(len(self.feature), -1, dtype=np.int64)
        direction[split & (ub[f] <= self.threshold)] = 0
        direction[split & (lb[f] > self.threshold)] = 1
        return self._fold(direction, None, self._n)

    def _leaf_ranges(self):
        """Per tree: leaves (global indices, DFS order) and per split node the ranges
        ``[a, b)`` / ``[b, c)`` of its left / right subtree's leaves in that order."""
        def walk(n: int, leaves: list, ranges: dict) -> None:
            if self.feature[n] < 0:
                leaves.append(n)
                return
            a = len(leaves)
            walk(self.left[n], leaves, ranges)
            b = len(leaves)
            walk(self.right[n], leaves, ranges)
            ranges[n] = (a, b, len(leaves))

        out = []
        for r in self.roots:
            leaves, ranges = [], {}
            walk(int(r), leaves, ranges)
            out.append((np.array(leaves, dtype=np.int64), ranges))
        return out

    def score_bounds(self, lb, ub) -> tuple[float, float]:
        """Interval bounds of the score over the box ``[lb, ub]``: per tree (folded over
        the box) its smallest and largest reachable leaf value."""
        folded = self.restrict(lb, ub)
        lo = hi = 0.0
        for leaves, _ in folded._leaf_ranges():
            v = folded.value[leaves]
            lo += float(v.min())
            hi += float(v.max())
        s = self.scale
        return (folded.base + min(s * lo, s * hi), folded.base + max(s * lo, s * hi))

    # -- MIP formulation --------------------------------------------------------------
    def add_to(self, backend: Backend, x_idx, domain: InputDomain,
               lo: float | None = None) -> TreeConstr:
        """Add the ensemble to ``backend`` (formulation in the module docstring)."""
        from groupcf.solvers.base import VarType

        x_idx = np.asarray(x_idx, dtype=np.int64).reshape(-1)
        if len(x_idx) != self._n:
            raise ValueError(f"{len(x_idx)} input variables for a model with {self._n} inputs")
        lb, ub = np.asarray(domain.lb, float), np.asarray(domain.ub, float)
        folded = self.restrict(lb, ub)
        split = folded.feature >= 0
        cols = folded.feature[split]
        if np.any(~np.isfinite(lb[cols]) | ~np.isfinite(ub[cols])):
            raise ValueError("every column a tree splits on needs finite bounds in the domain")
        integer = np.asarray(domain.integer, dtype=bool)
        binary = integer & (lb >= 0.0) & (ub <= 1.0)
        # levels: (column, snapped threshold) -> level number; binary columns use x directly
        t_snap = folded.threshold.copy()
        t_snap[split & integer[np.where(split, folded.feature, 0)]] = np.floor(
            t_snap[split & integer[np.where(split, folded.feature, 0)]])
        grids = getattr(domain, "grids", None) or {}
        for n in np.flatnonzero(split):
            if int(folded.feature[n]) in grids:
                t_snap[n] = grid_threshold(folded.threshold[n], *grids[int(folded.feature[n])])
        raw = sorted({(int(c), float(t)) for c, t in zip(folded.feature[split], t_snap[split])
                      if not binary[c]})
        # one level per group of a column's thresholds closer than MERGE_TOL (its range):
        # y = 1 => x <= smallest, y = 0 => x >= the next value above the largest
        keys, level_of = [], {}
        for c, t in raw:
            width = MERGE_TOL * max(ub[c] - lb[c], 1.0)
            if keys and keys[-1][0] == c and not integer[c] and t - keys[-1][1] <= width:
                keys[-1][2] = t
            else:
                keys.append([c, t, t])
            level_of[(c, t)] = len(keys) - 1
        level_col = np.array([k[0] for k in keys], dtype=np.int64)
        level_thr = np.array([k[1] for k in keys], dtype=float)
        level_up = np.array([k[2] + 1.0 if integer[k[0]] else float(np.nextafter(k[2], INF))
                             for k in keys])
        levels = np.asarray(backend.add_vars(len(keys), lb=0.0, ub=1.0, vtype=VarType.BINARY),
                            dtype=np.int64) if keys else np.zeros(0, dtype=np.int64)
        R, C, V, LO, HI = [], [], [], [], []
        r = 0

        def row(idx, coef, lo_, hi_):
            nonlocal r
            R.extend([r] * len(idx))
            C.extend(idx)
            V.extend(coef)
            LO.append(lo_)
            HI.append(hi_)
            r += 1

        for j, (c, t, _) in enumerate(keys):
            xv, y, u, lo_c, t_up = int(x_idx[c]), int(levels[j]), ub[c], lb[c], level_up[j]
            row([xv, y], [1.0, u - t], -INF, u)                     # y = 1 => x <= t
            row([xv, y], [1.0, t_up - lo_c], t_up, INF)             # y = 0 => x >= t+
            if j + 1 < len(keys) and keys[j + 1][0] == c:
                row([y, int(levels[j + 1])], [1.0, -1.0], -INF, 0.0)   # ordered levels
        leaf_vars, leaf_nodes = [], []
        const = 0.0
        for leaves, ranges in folded._leaf_ranges():
            if len(leaves) == 1:
                const += folded.value[leaves[0]]
                continue
            w = np.asarray(backend.add_vars(len(leaves), lb=0.0, ub=1.0), dtype=np.int64)
            leaf_vars.append(w)
            leaf_nodes.append(leaves)
            row(w.tolist(), [1.0] * len(w), 1.0, 1.0)
            for n, (a, b, e) in ranges.items():
                c = int(folded.feature[n])
                if binary[c]:              # indicator 1 - x
                    xv = int(x_idx[c])
                    row(w[a:b].tolist() + [xv], [1.0] * (b - a) + [1.0], -INF, 1.0)
                    row(w[b:e].tolist() + [xv], [1.0] * (e - b) + [-1.0], -INF, 0.0)
                else:
                    y = int(levels[level_of[(c, float(t_snap[n]))]])
                    row(w[a:b].tolist() + [y], [1.0] * (b - a) + [-1.0], -INF, 0.0)
                    row(w[b:e].tolist() + [y], [1.0] * (e - b) + [1.0], -INF, 1.0)
        s_lo, s_hi = folded.score_bounds(lb, ub)
        score = int(backend.add_vars(1, lb=s_lo - 1e-9 * (1 + abs(s_lo)), ub=s_hi + 1e-9 * (1 + abs(s_hi)))[0])
        all_w = np.concatenate(leaf_vars) if leaf_vars else np.zeros(0, dtype=np.int64)
        all_l = np.concatenate(leaf_nodes) if leaf_nodes else np.zeros(0, dtype=np.int64)
        b0 = folded.base + folded.scale * const
        row([score] + all_w.tolist(), [1.0] + (-folded.scale * folded.value[all_l]).tolist(), b0, b0)
        lo_row = None
        if lo is not None:
            lo_row = r
            row([score], [1.0], float(lo), INF)
        A = sp.csr_matrix((V, (R, C)), shape=(r, backend.num_vars))
        rows = np.asarray(backend.add_rows(A, np.array(LO), np.array(HI)), dtype=np.int64)
        return TreeConstr(embedding=self, inputs=x_idx, score=score, rows=rows,
                          lo_row=None if lo_row is None else int(rows[lo_row]),
                          folded=folded, levels=levels, level_col=level_col,
                          level_thr=level_thr, leaf_vars=all_w, leaf_nodes=all_l,
                          level_up=level_up, lb=lb, ub=ub)
