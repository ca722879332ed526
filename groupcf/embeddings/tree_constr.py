"""What :meth:`~groupcf.embeddings.trees.TreeEnsemble.add_to` adds to a backend: the
score, the split-level binaries and the leaf flows (formulation in
:mod:`groupcf.embeddings.trees`)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from groupcf.embeddings._typing import ArrayLike, FloatArray, IntArray
from groupcf.embeddings.base import EmbeddingConstr

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.trees import TreeEnsemble
    from groupcf.solvers.base import Backend, Solution


#: split levels this close to a point (scaled units, far above any solver tolerance)
#: get a link to the change indicators (:meth:`TreeConstr.query_sides`)
SIDE_WINDOW = 1e-5


@dataclass
class TreeConstr(EmbeddingConstr):
    """What :meth:`TreeEnsemble.add_to` added: besides the score, the split-level
    binaries (``levels``, meaning ``x[level_col] <= level_thr``) and the leaf flows
    (``leaf_vars``, one per leaf ``leaf_nodes`` of the ensemble ``folded`` over the
    domain)."""

    folded: TreeEnsemble | None = None
    levels: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    level_col: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    level_thr: FloatArray = field(default_factory=lambda: np.zeros(0))
    leaf_vars: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    leaf_nodes: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    level_up: FloatArray = field(default_factory=lambda: np.zeros(0))
    lb: FloatArray | None = None
    ub: FloatArray | None = None
    leaf_tree: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def n_binaries(self) -> int:
        return len(self.levels)

    def _tree(self) -> TreeEnsemble:
        """``folded`` (set by :meth:`TreeEnsemble.add_to`)."""
        if self.folded is None:
            raise ValueError("this TreeConstr has no folded ensemble (built without TreeEnsemble.add_to)")
        return self.folded

    def get_error(self, x: Solution | ArrayLike) -> float:
        """``|score variable − embedding.score(inputs)|`` at a solution (a
        :class:`~groupcf.solvers.base.Solution` or the vector of all variable values)."""
        values = getattr(x, "x", x)
        if values is None:
            raise ValueError(f"the solution has no variable values (status {getattr(x, 'status', None)})")
        v = np.asarray(values, dtype=np.float64)
        return float(abs(v[self.score] - self.embedding.score(v[self.inputs])[0]))

    def start_values(self, x_values: ArrayLike) -> tuple[IntArray, FloatArray]:
        """Values of the level binaries, leaf flows and score at inputs ``x_values``."""
        x = np.asarray(x_values, dtype=float).reshape(-1)
        reached = set(self._tree().apply(x[None, :])[0].tolist())
        idx = np.concatenate([[self.score], self.levels, self.leaf_vars]).astype(np.int64)
        vals = np.concatenate([[float(self.embedding.score(x[None, :])[0])],
                               (x[self.level_col] <= self.level_thr).astype(float),
                               np.array([1.0 if n in reached else 0.0 for n in self.leaf_nodes])])
        return idx, vals

    def input_cells(self, x: Solution | ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Per input column, the interval ``[lo, hi]`` that the solution's (rounded) split
        levels allow: ``hi = t`` for a level at 1, ``lo = t+`` for a level at 0, the
        domain's bounds elsewhere. Every input inside these intervals reaches the same
        leaves; decoding uses them to keep rounded values on the model's side of every
        threshold (solver tolerances let ``x`` sit up to ~1e-7 past ``t+``)."""
        values = np.asarray(getattr(x, "x", x), dtype=float)
        y = np.round(values[self.levels]) >= 0.5
        lo, hi = np.array(self.lb, dtype=float), np.array(self.ub, dtype=float)
        np.minimum.at(hi, self.level_col[y], self.level_thr[y])
        np.maximum.at(lo, self.level_col[~y], self.level_up[~y])
        return lo, hi

    def query_sides(self, z0: ArrayLike, window: float = SIDE_WINDOW) -> list[tuple[int, int, bool]]:
        """``(column, level binary, z0's value of it)`` for the split levels within
        ``window`` of ``z0`` that ``z0`` decides (``z0 <= t``: 1, ``z0 >= t+``: 0). The
        query can sit exactly on a threshold (scikit-learn keeps ``t`` = the lower of two
        training values that are adjacent in float32), so ``t+`` is one float away, inside
        the solver's tolerance: only this link makes the MIP count that crossing as a
        change. Farther levels need no link: crossing them moves the input by more than
        the tolerance, which the formulation's own agreement rows already count."""
        z = np.asarray(z0, dtype=float)[self.level_col]
        left, right = z <= self.level_thr, z >= self.level_up
        near = np.minimum(np.abs(z - self.level_thr), np.abs(z - self.level_up)) <= window
        return [(int(c), int(y), bool(lf)) for c, y, lf, rt, nr in
                zip(self.level_col, self.levels, left, right, near) if (lf or rt) and nr]

    def leaf_boxes(self, leaves: IntArray) -> tuple[FloatArray, FloatArray]:
        """The input cell of each leaf (nodes of ``folded``) inside the domain: ``(lo, hi)``
        of shape ``(len(leaves), n_inputs)``; a left branch ``x <= t`` gives ``hi <= t``, a
        right branch ``lo >= nextafter(t)``. Every input reaching the leaf lies in its cell."""
        from groupcf.embeddings.tree_splits import leaf_boxes
        return leaf_boxes(self._tree(), leaves, np.asarray(self.lb, dtype=float), np.asarray(self.ub, dtype=float))

    def distance_cuts(self, cell_distance: Callable[[FloatArray, FloatArray], FloatArray],
                      chunk: int = 2_000_000) -> list[tuple[IntArray, FloatArray]]:
        """Per tree, ``sum_leaf d_leaf w_leaf <= distance`` (one leaf flow is 1 at every
        solution): ``d_leaf = cell_distance(lo, hi)`` of the leaf's cell
        (:meth:`leaf_boxes`), a lower bound of the distance from the query of any input
        reaching it. Returns ``(leaf variables, d)`` per tree with a positive ``d``."""
        m, n = len(self.leaf_vars), max(int(self.embedding.n_inputs), 1)
        if m == 0:
            return []
        d = np.empty(m)
        step = max(1, chunk // n)
        for a in range(0, m, step):
            lo, hi = self.leaf_boxes(self.leaf_nodes[a:a + step])
            d[a:a + step] = cell_distance(lo, hi)
        out: list[tuple[IntArray, FloatArray]] = []
        bounds = np.flatnonzero(np.diff(self.leaf_tree)) + 1
        for idx, dk in zip(np.split(self.leaf_vars, bounds), np.split(d, bounds)):
            if dk.max() > 0:
                out.append((idx, dk))
        return out

    def move_cuts(self, z0: ArrayLike) -> list[tuple[int, IntArray, FloatArray, float]]:
        """Per column with split levels on both sides or either side of ``z0``:
        ``(column, level binaries, coefficients, constant)`` with
        ``|x_c - z0_c| >= constant + coefficients @ levels`` at every solution. The levels
        above ``z0_c`` telescope: leaving the ``j``-th one (``y_j = 0``, ``x_c >= t+_j``)
        means moving up by ``t+_j - z0_c``, the sum of the gaps ``t+_i - t+_{i-1}`` of the
        levels passed; below ``z0_c`` likewise with ``y_j = 1`` (``x_c <= t_j``). The
        levels of a column are ordered (``y_j <= y_{j+1}``), so at most one side is
        non-zero and each side is exact at a level's own bound."""
        z = np.asarray(z0, dtype=np.float64)
        out: list[tuple[int, IntArray, FloatArray, float]] = []
        for c in np.unique(self.level_col):
            at = np.flatnonzero(self.level_col == c)          # ascending thresholds
            x0 = z[c]
            above = at[self.level_thr[at] >= x0]              # y = 1 at z0
            below = at[self.level_up[at] <= x0]               # y = 0 at z0
            idx: list[IntArray] = []
            coef: list[FloatArray] = []
            const = 0.0
            if len(above):
                up = self.level_up[above]
                gaps = np.diff(np.concatenate([[x0], up]))
                idx.append(self.levels[above])
                coef.append(-gaps)                            # sum g (1 - y)
                const += float(gaps.sum())
            if len(below):
                t = self.level_thr[below]
                gaps = np.diff(np.concatenate([t, [x0]]))     # t_{j+1} - t_j, last: x0 - t_j
                idx.append(self.levels[below])
                coef.append(gaps)                             # sum h y
            if idx:
                out.append((int(c), np.concatenate(idx), np.concatenate(coef), const))
        return out

    def fix_levels(self, backend: Backend, lb: ArrayLike, ub: ArrayLike) -> int:
        """Fix every split level that the input bounds ``[lb, ub]`` decide (e.g. after
        tightening them to a radius); returns how many were fixed."""
        low, up = np.asarray(lb, dtype=np.float64), np.asarray(ub, dtype=np.float64)
        one = up[self.level_col] <= self.level_thr
        zero = low[self.level_col] >= self.level_up
        if one.any():
            backend.set_bounds(self.levels[one], 1.0, 1.0)
        if zero.any():
            backend.set_bounds(self.levels[zero], 0.0, 0.0)
        return int(one.sum() + zero.sum())

    def __repr__(self) -> str:
        return (f"TreeConstr({self.folded!r}, levels={len(self.levels)}, leaves={len(self.leaf_vars)}, "
                f"score=x[{self.score}], rows={len(self.rows)})")
