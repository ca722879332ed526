r"""What a bound on MACE's objective implies, for any model: per-feature distances of
candidate points, the single changes of a discrete feature, the most features a solution
can change, and the radius box.

With weights :math:`w_0, w_1, w_\infty` and :math:`|T|` features, changing feature
:math:`l` by :math:`\delta > 0` costs at least :math:`(w_0 + w_1\delta)/|T| + w_\infty\delta`,
so no solution better than :math:`U` changes a continuous feature by more than
:math:`r = (U - w_0/|T|)/(w_1/|T| + w_\infty)`, nor a discrete feature whose cheapest change
costs more than :math:`U`; with an l0 weight at most :math:`k = \lfloor U|T|/w_0 \rfloor`
features change. The default of :meth:`groupcf.embeddings.base.Embedding.radius` (part of
the embedding protocol: model-independent, it needs only the feature space and the
distance's weights); used by the numpy upper bounds of tree ensembles
(:mod:`groupcf.single.tree_bound`) and ReLU networks (:mod:`groupcf.single.net_bound`).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np

from groupcf.embeddings._typing import BoolArray, FloatArray

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.features.space import Feature, FeatureSpace

__all__ = ["Radius", "category_changes", "deltas", "max_changes", "radius_box"]


class DistanceWeights(Protocol):
    """What the radius needs of MACE's distance (:class:`groupcf.formulations.distances.Distance`):
    the weights of the normalised l0, l1 and linf norms, and their mix of per-feature
    distances."""

    @property
    def l0(self) -> float: ...

    @property
    def l1(self) -> float: ...

    @property
    def linf(self) -> float: ...

    def aggregate(self, D: FloatArray) -> FloatArray:
        """Distances ``(m,)`` from per-feature distances ``D`` (shape ``(m, |T|)``)."""
        ...


def category_changes(f: Feature, z0: FloatArray, lb: FloatArray, ub: FloatArray) -> list[FloatArray] | None:
    """The single changes of a one-hot or binary feature ``f`` allowed by the bounds
    ``lb``/``ub`` (each other category), as values of its columns; ``None`` for any other
    encoding. Shared by the tree and network upper bounds."""
    cols = np.asarray(f.columns)
    if f.encoding == "onehot":
        h0 = int(np.argmax(z0[cols]))
        return [np.eye(len(cols))[h] for h in range(len(cols)) if h != h0 and ub[cols[h]] >= 0.5]
    if f.encoding == "binary":
        new = 1.0 - z0[cols[0]]
        return [np.array([new])] if lb[cols[0]] <= new <= ub[cols[0]] else []
    return None


def deltas(space: FeatureSpace, z0: FloatArray, Z: FloatArray) -> FloatArray:
    """Per-feature distances (MACE's measure) of expanded rows ``Z`` from ``z0``."""
    D = np.zeros((len(Z), len(space)))
    for l, f in enumerate(space):
        cols = f.columns
        if f.encoding == "continuous":
            D[:, l] = np.abs(Z[:, cols[0]] - z0[cols[0]])
        elif f.encoding == "binary":
            D[:, l] = np.abs(np.round(Z[:, cols[0]]) - round(z0[cols[0]]))
        else:
            h = np.argmax(Z[:, cols], axis=1)
            h0 = int(np.argmax(z0[cols]))
            if f.kind == "categorical" or len(cols) < 2:
                D[:, l] = (h != h0).astype(float)
            else:
                D[:, l] = np.abs(h - h0) / (len(cols) - 1)
    return D


def max_changes(space: FeatureSpace, distance: DistanceWeights, bound: float) -> int | None:
    """Most features a solution of objective ``<= bound`` can change (each costs at least
    :math:`w_0/|T|`), ``None`` without an l0 weight."""
    w0 = distance.l0 / max(len(space), 1)
    if not w0 > 0:
        return None
    return int(math.floor((bound + 1e-9 * max(1.0, abs(bound))) / w0))


class Radius(NamedTuple):
    """What a bound ``U`` on the objective implies (module doc, step 3)."""

    lb: FloatArray            # column bounds (the box; fixed features at the instance)
    ub: FloatArray
    can_change: BoolArray     # per feature
    k: int | None             # most changed features (None without an l0 weight)
    budget: float             # sum of |v_c - x0_c| over continuous columns (inf without l1)


def radius_box(space: FeatureSpace, distance: DistanceWeights, bound: float, z0: FloatArray, lb: FloatArray,
               ub: FloatArray, can_change: BoolArray, min_changes: int = 1) -> Radius:
    """The box, fixed features, cardinality and l1 budget of the solutions of objective
    ``<= bound`` (module doc, step 3) that change at least ``min_changes`` features (each
    of the others costs at least :math:`w_0/|T|`, which leaves less for any one)."""
    n = max(len(space), 1)
    w0, w1, winf = distance.l0, distance.l1, distance.linf
    slack = bound + 1e-9 * max(1.0, abs(bound)) - max(min_changes - 1, 0) * w0 / n
    lb, ub, can_change = lb.copy(), ub.copy(), can_change.copy()
    for l, f in enumerate(space):
        if not can_change[l] or f.immutable:
            continue
        cols = f.columns
        if f.encoding == "continuous":
            slope = w1 / n + winf
            if w0 / n > slack:
                r = 0.0
            elif slope > 0:
                r = (slack - w0 / n) / slope
            else:
                continue
            c = int(cols[0])
            lb[c] = max(lb[c], z0[c] - r)
            ub[c] = min(ub[c], max(z0[c] + r, lb[c]))
            can_change[l] = ub[c] > lb[c]
        else:
            step = 1.0 if (f.encoding == "binary" or f.kind == "categorical") else 1.0 / max(len(cols) - 1, 1)
            if (w0 + w1 * step) / n + winf * step > slack:
                can_change[l] = False
        if not can_change[l]:
            lb[cols] = ub[cols] = z0[cols]
    budget = (slack - w0 / n) * n / w1 if w1 > 0 else math.inf
    return Radius(lb, ub, can_change, max_changes(space, distance, bound), max(budget, 0.0))
