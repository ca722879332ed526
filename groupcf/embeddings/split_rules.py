"""Frameworks' float32 split tests as exact float64 thresholds ``x <= t'`` (used by the
tree converters; :mod:`groupcf.embeddings.trees`)."""
from __future__ import annotations

import numpy as np

from groupcf.embeddings._typing import ArrayLike, FloatArray


def le_threshold_f32(t: ArrayLike) -> FloatArray:
    """The largest float64 ``x`` with ``float32(x) <= t`` (round to nearest even), per
    element: scikit-learn's tree test as a float64 ``x <= result``."""
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = t.astype(np.float32)
        f = np.where(f.astype(np.float64) > t, np.nextafter(f, np.float32(-np.inf)), f)
        g = np.nextafter(f, np.float32(np.inf))
        m = (f.astype(np.float64) + g.astype(np.float64)) / 2.0     # exact in float64
        ok = m.astype(np.float32) == f
        out = np.where(ok, m, np.nextafter(m, -np.inf))
    return np.where(np.isinf(f), np.where(f > 0, np.inf, -np.inf), out)


def lt_threshold_f32(t: ArrayLike) -> FloatArray:
    """The largest float64 ``x`` with ``float32(x) < float32(t)``: XGBoost's split test."""
    s = np.asarray(t, dtype=np.float64).astype(np.float32)
    return le_threshold_f32(np.nextafter(s, np.float32(-np.inf)).astype(np.float64))
