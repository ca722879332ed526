r"""The MACE distance: a weighted mix of normalised l0, l1 and linf over original features.

One definition, used three times: by the nearest-counterfactual MIP
(:class:`groupcf.formulations.nearest.NearestCounterfactual`), by the distances an
:class:`~groupcf.results.explanation.Explanation` reports, and by :mod:`groupcf.metrics`.
They agree exactly (up to the solver's tolerances).

**Per-feature distance** :math:`\delta_l \in [0, 1]` between an instance :math:`x` and a
point :math:`x'`, for each original feature :math:`l` of the
:class:`~groupcf.FeatureSpace`:

==========================================  ===============================================
feature                                     :math:`\delta_l`
==========================================  ===============================================
binary (one 0/1 column)                     :math:`|x'_l - x_l| \in \{0, 1\}`
categorical (unordered one-hot)             :math:`[x'_l \ne x_l]`
ordinal one-hot, ``k`` categories           :math:`|c(x'_l) - c(x_l)| / (k - 1)` (codes
(ordered ``Categorical``, binned numeric)   ``c = 0..k-1``; 0 when ``k = 1``)
numeric passthrough (continuous)            :math:`|x'_l - x_l| / (\mathrm{high}_l -
                                            \mathrm{low}_l)`, i.e. the difference in the
                                            space's scaled [0, 1] units
==========================================  ===============================================

**Norms** over the :math:`|T|` original features (MACE's normalised convention: l0 and l1
are *means* over the features, so every norm lies in [0, 1]):

.. math::

    \ell_0 = \frac{1}{|T|}\sum_l [\delta_l > 0], \qquad
    \ell_1 = \frac{1}{|T|}\sum_l \delta_l, \qquad
    \ell_\infty = \max_l \delta_l,

and the distance is :math:`d = w_0 \ell_0 + w_1 \ell_1 + w_\infty \ell_\infty` with weights
:math:`w \ge 0` (``distance="l1"`` is :math:`w = (0, 1, 0)`; a dict such as
``{"l0": 0.1, "l1": 0.9}`` gives a mix). :math:`|T|` counts *all* original features,
immutable ones included, so distances are comparable across actionability settings.
(MACE's reference code divides by the number of mutable features and also divides
:math:`\ell_\infty` by it; we keep :math:`\ell_\infty` a plain maximum, as in the MACE
paper's definition (Karimi et al. 2020, Sec. 3) and GeCo's fitness (Schleich et al. 2021, eq. 11).)
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..exceptions import InvalidInputError

if TYPE_CHECKING:  # pragma: no cover
    from ..features.space import Feature, FeatureSpace

#: the norms a distance mixes
NORMS = ("l0", "l1", "linf")

#: a per-feature distance above this counts as a change for l0
CHANGE_TOL = 1e-9


@dataclass(frozen=True)
class Distance:
    """Weights of the normalised l0, l1 and linf norms (see the module docstring)."""

    l0: float = 0.0
    l1: float = 0.0
    linf: float = 0.0

    @property
    def weights(self) -> dict[str, float]:
        return {"l0": self.l0, "l1": self.l1, "linf": self.linf}

    @property
    def name(self) -> str:
        """``"l1"`` for a pure norm, else ``"0.1*l0+0.9*l1"``."""
        used = {k: w for k, w in self.weights.items() if w > 0}
        if len(used) == 1 and next(iter(used.values())) == 1.0:
            return next(iter(used))
        return "+".join(f"{w:g}*{k}" for k, w in used.items())

    def __str__(self) -> str:
        return self.name

    def aggregate(self, D: np.ndarray) -> np.ndarray:
        """Distances from per-feature distances ``D`` (shape ``(m, |T|)``) -> ``(m,)``."""
        D = np.atleast_2d(np.asarray(D, dtype=float))
        n = max(D.shape[1], 1)
        out = np.zeros(D.shape[0])
        if self.l0:
            out += self.l0 * (D > CHANGE_TOL).sum(axis=1) / n
        if self.l1:
            out += self.l1 * D.sum(axis=1) / n
        if self.linf and D.shape[1]:
            out += self.linf * D.max(axis=1)
        return out


def weight_value(w: Any, what: str) -> float:
    """``w`` as a float, or :class:`InvalidInputError` naming ``what`` when it is not a
    finite number >= 0."""
    try:
        v = float(w)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{what} must be a number, got {w!r}") from None
    if not math.isfinite(v) or v < 0:
        raise InvalidInputError(f"{what} must be finite and >= 0, got {w!r}")
    return v


def parse_distance(spec: DistanceSpec) -> Distance:
    """``"l0"`` / ``"l1"`` / ``"linf"``, a ``{norm: weight}`` dict, or a :class:`Distance`.

    Raises :class:`~groupcf.exceptions.InvalidInputError` for an unknown norm name,
    a negative or non-finite weight, or weights that are all zero.
    """
    if isinstance(spec, Distance):
        weights = spec.weights
    elif isinstance(spec, str):
        if spec not in NORMS:
            raise InvalidInputError(f"unknown distance {spec!r}; use one of {list(NORMS)} "
                                    "or a dict of weights such as {'l0': 0.1, 'l1': 0.9}")
        weights = {spec: 1.0}
    elif isinstance(spec, Mapping):
        bad = [k for k in spec if k not in NORMS]
        if bad:
            raise InvalidInputError(f"unknown norm(s) {bad} in distance weights; use {list(NORMS)}")
        weights = {k: weight_value(w, f"the weight of {k!r}") for k, w in spec.items()}
    else:
        raise InvalidInputError(f"distance must be a norm name {list(NORMS)} or a dict of weights, "
                                f"got {type(spec).__name__}")
    if not any(w > 0 for w in weights.values()):
        raise InvalidInputError(f"distance weights are all zero: {dict(weights)}")
    return Distance(**{k: float(w) for k, w in weights.items()})


#: what ``distance=`` accepts: a norm name, ``{norm: weight}`` or a :class:`Distance`
DistanceSpec = str | Mapping[str, float] | Distance


# ----------------------------------------------------------------------- per-feature
def feature_measure(feat: Feature) -> str:
    """How :math:`\\delta_l` is measured: ``"binary"``, ``"nominal"``, ``"ordinal"`` or
    ``"continuous"`` (see the module docstring)."""
    if feat.encoding == "binary":
        return "binary"
    if feat.encoding == "continuous":
        return "continuous"
    return "nominal" if feat.kind == "categorical" else "ordinal"


def feature_distances_codes(space: FeatureSpace, x_codes: npt.ArrayLike, codes: npt.ArrayLike) -> np.ndarray:
    """Per-feature distances ``(m, |T|)`` from :meth:`FeatureSpace.codes` rows."""
    x0 = np.asarray(x_codes, dtype=np.float64).ravel()
    C = np.atleast_2d(np.asarray(codes, dtype=np.float64))
    D = np.abs(C - x0[None, :])
    for l, feat in enumerate(space):
        kind = feature_measure(feat)
        if kind == "nominal":
            D[:, l] = (D[:, l] > 0.5).astype(float)
        elif kind == "ordinal":
            k = len(feat.categories)
            D[:, l] = D[:, l] / (k - 1) if k > 1 else 0.0
    return D


def feature_distances(space: FeatureSpace, x: pd.Series | pd.DataFrame, X: pd.DataFrame) -> np.ndarray:
    """Per-feature distances ``(m, |T|)`` between a raw instance ``x`` (Series or one-row
    DataFrame) and raw rows ``X`` (DataFrame)."""
    xf = x.to_frame().T if isinstance(x, pd.Series) else x
    return feature_distances_codes(space, space.codes(xf)[0], space.codes(X))


def max_feature_distances(space: FeatureSpace) -> np.ndarray:
    """The largest :math:`\\delta_l` two points of the space can have: 1, or 0 for a
    feature with a single category."""
    return np.array([0.0 if feat.encoding == "onehot" and len(feat.categories) < 2 else 1.0
                     for feat in space])


def distances(space: FeatureSpace, x: pd.Series | pd.DataFrame, X: pd.DataFrame,
              distance: DistanceSpec = "l1") -> np.ndarray:
    """The distance (see the module docstring) of each raw row of ``X`` to ``x``."""
    return parse_distance(distance).aggregate(feature_distances(space, x, X))


def box_distance(space: FeatureSpace, distance: Distance, z0: npt.ArrayLike, can_change: Sequence[bool] | np.ndarray,
                 lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """A lower bound of MACE's distance from ``z0`` (expanded) of any point in each box
    ``[lo_k, hi_k]`` (rows of expanded column bounds; features with ``can_change`` false
    are ignored): per feature the cheapest move
    from :math:`x^0` into the box — a continuous feature's gap to the box (its l0 term
    when the gap is positive), a binary or categorical feature's change when the box
    excludes :math:`x^0`'s value, an ordinal feature's nearest allowed code — summed as
    :func:`Distance.aggregate` sums them, plus :math:`w_\\infty` times the largest."""
    lo, hi = np.atleast_2d(lo), np.atleast_2d(hi)
    d, z0, n = distance, np.asarray(z0, dtype=float), max(len(space), 1)
    total, worst = np.zeros(len(lo)), np.zeros(len(lo))
    for l, feat in enumerate(space):
        if not can_change[l]:
            continue
        cols = np.asarray(feat.columns)
        if feat.encoding == "continuous":
            c = int(cols[0])
            gap = np.maximum(np.maximum(lo[:, c] - z0[c], z0[c] - hi[:, c]), 0.0)
            total += (gap > 0) * (d.l0 / n) + gap * (d.l1 / n)
        elif feat.encoding == "binary":
            c = int(cols[0])
            moved = hi[:, c] < 1.0 if z0[c] >= 0.5 else lo[:, c] > 0.0
            gap = moved.astype(float)
            total += gap * ((d.l0 + d.l1) / n)
        else:
            if len(cols) < 2:
                continue
            one, zero = lo[:, cols] > 0.0, hi[:, cols] < 1.0
            allowed = ~zero & (one | ~one.any(axis=1, keepdims=True))
            h0 = int(np.argmax(z0[cols]))
            moved = ~allowed[:, h0]
            if feature_measure(feat) == "ordinal":
                k = len(cols)
                steps = np.where(allowed, np.abs(np.arange(k) - h0)[None, :], k)
                gap = np.where(moved, np.clip(steps.min(axis=1), 1, k - 1) / (k - 1), 0.0)
                total += moved * (d.l0 / n) + gap * (d.l1 / n)
            else:
                gap = moved.astype(float)
                total += gap * ((d.l0 + d.l1) / n)
        worst = np.maximum(worst, gap)
    return total + d.linf * worst

