r"""Information value (IV) ranking of actionable features (Shekhar et al. 2023, §IV-E).

For a feature binned into :math:`B` bins, with :math:`p_i` the share of the positive
class and :math:`q_i` the share of the negative class that falls in bin :math:`i`:

.. math::

    \mathrm{IV} = \sum_{i=1}^{B} (p_i - q_i)\,\ln\frac{p_i}{q_i}

(the standard definition; the paper prints the formula without the logarithm). Empty
cells are smoothed: ``count + alpha`` (default 0.5) before normalising, so no term is
infinite. Continuous features use ``bins`` (default 10) quantile bins; binary features
their two values; a one-hot group (categorical, ordinal, binned numeric) its categories,
so a group is ranked as **one** feature. Immutable features are never ranked.
"""
from __future__ import annotations

import numpy as np


def information_value(values: np.ndarray, y: np.ndarray, bins: int | None = 10,
                      alpha: float = 0.5) -> float:
    """IV of one feature. ``values``: numeric values, or integer category codes when
    ``bins`` is None (one bin per distinct code); ``y``: 0/1 labels."""
    values = np.asarray(values, dtype=float)
    y = np.asarray(y).astype(bool)
    if bins is None:
        _, idx = np.unique(values, return_inverse=True)
    else:
        edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1]))
        idx = np.searchsorted(edges, values, side="right")
    k = int(idx.max()) + 1 if len(idx) else 1
    pos = np.bincount(idx[y], minlength=k) + alpha
    neg = np.bincount(idx[~y], minlength=k) + alpha
    p, q = pos / pos.sum(), neg / neg.sum()
    return float(np.sum((p - q) * np.log(p / q)))


def rank_features(space, codes: np.ndarray, y: np.ndarray, bins: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """``(order, iv)``: indices of the mutable original features of ``space`` by
    decreasing IV (ties by index), and the IV of every feature (``nan`` if immutable).
    ``codes`` is ``space.codes(data)`` (scaled value / category code per feature)."""
    iv = np.full(len(space), np.nan)
    for l, f in enumerate(space):
        if f.immutable:
            continue
        continuous = f.encoding == "continuous"
        iv[l] = information_value(codes[:, l], y, bins=bins if continuous else None)
    mutable = np.flatnonzero(~np.isnan(iv))
    order = mutable[np.lexsort((mutable, -iv[mutable]))]
    return order, iv
