"""What :meth:`~groupcf.embeddings.trees.TreeEnsemble.add_to` adds to a backend: the
score, the split-level binaries and the leaf flows (formulation in
:mod:`groupcf.embeddings.trees`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from groupcf.embeddings.base import EmbeddingConstr

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.trees import TreeEnsemble


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
    levels: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    level_col: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    level_thr: np.ndarray = field(default_factory=lambda: np.zeros(0))
    leaf_vars: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    leaf_nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    level_up: np.ndarray = field(default_factory=lambda: np.zeros(0))
    lb: np.ndarray | None = None
    ub: np.ndarray | None = None

    @property
    def n_binaries(self) -> int:
        return len(self.levels)

    def get_error(self, x) -> float:
        """``|score variable − embedding.score(inputs)|`` at a solution (a
        :class:`~groupcf.solvers.base.Solution` or the vector of all variable values)."""
        values = getattr(x, "x", x)
        if values is None:
            raise ValueError(f"the solution has no variable values (status {getattr(x, 'status', None)})")
        values = np.asarray(values, dtype=float)
        return float(abs(values[self.score] - self.embedding.score(values[self.inputs])[0]))

    def start_values(self, x_values) -> tuple[np.ndarray, np.ndarray]:
        """Values of the level binaries, leaf flows and score at inputs ``x_values``."""
        x = np.asarray(x_values, dtype=float).reshape(-1)
        reached = set(self.folded.apply(x[None, :])[0].tolist())
        idx = np.concatenate([[self.score], self.levels, self.leaf_vars]).astype(np.int64)
        vals = np.concatenate([[float(self.embedding.score(x[None, :])[0])],
                               (x[self.level_col] <= self.level_thr).astype(float),
                               np.array([1.0 if n in reached else 0.0 for n in self.leaf_nodes])])
        return idx, vals

    def input_cells(self, x) -> tuple[np.ndarray, np.ndarray]:
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

    def query_sides(self, z0, window: float = SIDE_WINDOW) -> list[tuple[int, int, bool]]:
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

    def fix_levels(self, backend, lb, ub) -> int:
        """Fix every split level that the input bounds ``[lb, ub]`` decide (e.g. after
        tightening them to a radius); returns how many were fixed."""
        lb, ub = np.asarray(lb, dtype=float), np.asarray(ub, dtype=float)
        one = ub[self.level_col] <= self.level_thr
        zero = lb[self.level_col] >= self.level_up
        if one.any():
            backend.set_bounds(self.levels[one], 1.0, 1.0)
        if zero.any():
            backend.set_bounds(self.levels[zero], 0.0, 0.0)
        return int(one.sum() + zero.sum())

    def __repr__(self) -> str:
        return (f"TreeConstr({self.folded!r}, levels={len(self.levels)}, leaves={len(self.leaf_vars)}, "
                f"score=x[{self.score}], rows={len(self.rows)})")
