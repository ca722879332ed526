r"""Nearest counterfactual of one instance under the l0 distance (MACE-style, exact).

Given an instance :math:`x^0` (expanded, :math:`x^0 \in \{0,1\}^{|\bar T|}`, continuous
columns scaled to [0, 1]) rejected by the model, find :math:`v` classified positive that
changes the fewest *original* features:

.. math::

    \min \sum_{l \in T} f_l
    \quad\text{s.t.}\quad
    \mathrm{score}(v) \ge \tau + \varepsilon                     &\quad\text{(embedding; paper eqs. 2–3)}\\
    \textstyle\sum_{h\in T_l} v_h = 1                 \quad l \in T_c  &\quad\text{(one-hot; eq. 11)}\\
    f_l \ge 1 - v_{h(l)}                              \quad l \in T_c  &\quad\text{(changed if }x^0\text{'s category is left)}\\
    f_l \ge |v_l - x^0_l|  \text{ (linear, } x^0_l \text{ fixed)} \quad l \text{ binary} \\
    |v_l - x^0_l| \le f_l                             \quad l \text{ continuous} \\
    \textstyle\sum_l f_l \le T_{\max}                            &\quad\text{(eq. 10, one instance)}\\
    f_l = 0 \quad l \text{ immutable};\qquad v \succeq x^0 \text{ on increase-only } l

where :math:`h(l)` is the column of :math:`x^0`'s category of feature :math:`l`. This is
the single-instance case (:math:`|S| = K = 1`) of the compact MIP (eqs. 1–14), with the
per-feature agreement rows of :mod:`groupcf.formulations.blocks` (one row per feature
instead of the paper's :math:`|T_l| f_l \ge \sum_{h \in T_l} d_h`); minimisation makes
:math:`f_l` exact. Increase-only ordinal features
forbid the categories below :math:`x^0`'s (upper bound 0); an increase-only binary with
:math:`x^0_l = 1` is fixed; a continuous one gets :math:`v_l \ge x^0_l`. These bounds are
also applied to the embedding's input domain, so big-M constants are computed over the
actionable region only.

:math:`\varepsilon` is a small safety margin on the logit against solver tolerances; the
caller re-checks the answer with the real model.

Diversity: after a solution :math:`\hat v`, the cut "differ from :math:`\hat v` in at
least one original feature" (MACE's rule) excludes it:
:math:`\sum_{l\in T_c} (1 - v_{\hat h(l)}) + \sum_{l \text{ binary}} |v_l - \hat v_l| \ge 1`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..features.space import FeatureSpace
from ..embeddings.base import Embedding, EmbeddingConstr
from ..solvers.base import INF, Backend
from .blocks import add_agreement, add_counterfactual
from .rows import RowBuffer


def actionable_bounds(space: FeatureSpace, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bounds on the expanded variables implied by actionability at instance ``z0``.

    Returns ``(lb, ub, can_change)``: column bounds, and per original feature whether it
    may change at all (``False`` for immutable features and for increase-only features
    already at their maximum).
    """
    dom = space.domain()
    lb, ub = dom.lb.copy(), dom.ub.copy()
    can_change = np.ones(len(space), dtype=bool)
    for l, f in enumerate(space):
        cols = f.columns
        if f.immutable:
            lb[cols] = ub[cols] = z0[cols]
            can_change[l] = False
            continue
        if not f.increase_only:
            continue
        if f.encoding == "onehot":
            h0 = int(np.argmax(z0[cols]))
            ub[cols[:h0]] = 0.0
            can_change[l] = h0 < len(cols) - 1
        else:  # binary or continuous: v >= x0
            lb[cols] = z0[cols]
            can_change[l] = z0[cols[0]] < ub[cols[0]]
    return lb, ub, can_change


@dataclass
class NearestL0:
    """The nearest-counterfactual (l0) MIP for one instance, built on a backend.

    Attributes after :meth:`build`: ``v`` (expanded input variables), ``f`` (per-feature
    change indicators), ``constr`` (the embedding's constraint record).
    """

    space: FeatureSpace
    embedding: Embedding
    z0: np.ndarray
    backend: Backend
    score_lo: float = 0.0
    Tmax: int | None = None
    v: np.ndarray = field(init=False)
    f: np.ndarray = field(init=False)
    constr: EmbeddingConstr = field(init=False)

    def build(self) -> "NearestL0":
        space, be, z0 = self.space, self.backend, np.asarray(self.z0, dtype=float)
        lb, ub, can_change = actionable_bounds(space, z0)
        block = add_counterfactual(be, space, self.embedding, self.score_lo, lb, ub, can_change, Tmax=self.Tmax)
        self.v, self.f, self.constr = block.v, block.f, block.constr
        rows = RowBuffer()
        add_agreement(rows, space, block, z0)            # z = 1: f_l >= [v differs on l]
        rows.flush(be)
        be.set_objective(self.f, np.ones(len(self.f)), sense="min")
        return self

    def exclude(self, v_hat: np.ndarray) -> None:
        """Add the diversity cut: the next solution differs from ``v_hat`` in at least one
        original (discrete) feature."""
        idx, coef, const = [], [], 0.0
        for feat in self.space:
            cols = self.v[feat.columns]
            if feat.encoding == "onehot":
                h = int(np.argmax(v_hat[feat.columns]))
                idx.append(cols[h]); coef.append(-1.0); const += 1.0        # 1 - v_h
            elif feat.encoding == "binary":
                if v_hat[feat.columns[0]] >= 0.5:
                    idx.append(cols[0]); coef.append(-1.0); const += 1.0    # 1 - v
                else:
                    idx.append(cols[0]); coef.append(1.0)                    # v
        if not idx:
            raise ValueError("no discrete feature to diversify on")
        self.backend.add_row(idx, coef, lo=1.0 - const, hi=INF)

    def changed(self, v: np.ndarray) -> list[int]:
        """Indices of the original features that expanded values ``v`` change."""
        z0 = np.asarray(self.z0, dtype=float)
        return [l for l, feat in enumerate(self.space)
                if np.any(np.abs(v[feat.columns] - z0[feat.columns]) > 1e-6)]
