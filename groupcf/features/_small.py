""":meth:`FeatureSpace.transform <groupcf.features.space.FeatureSpace.transform>` of one
row or a few, read value by value.

A counterfactual method encodes its instance (a Series) and re-checks a handful of
decoded rows; for such inputs the frame path's per-column pandas work (a Series per
column, a missing-value pass, a lookup per column) costs far more than the values
themselves. Here each feature's values are read once as a list and encoded with the same
arithmetic as the frame path. Anything this path does not read itself (a missing value,
an unknown category, text in a numeric column, a binned numeric, a repeated label, a
missing column) returns None, and the frame path encodes the rows or names what is wrong.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..utils import FloatArray, column_values
from ._values import _key

if TYPE_CHECKING:  # pragma: no cover
    from .space import FeatureSpace


def transform_small(space: FeatureSpace, X: object) -> FloatArray | None:
    """The encoding of a Series (one row) or of a frame of at most ``space.SMALL_FRAME``
    rows, or None (see the module docstring)."""
    if isinstance(X, pd.Series):
        row = dict(zip(X.index.tolist(), X.tolist()))
        if len(row) != len(X):
            return None
        return transform_values(space, {k: [v] for k, v in row.items()}, 1)
    if not isinstance(X, pd.DataFrame) or len(X) > space.SMALL_FRAME or not X.columns.is_unique:
        return None
    names = set(X.columns.tolist())
    if any(f.name not in names for f in space.features_):
        return None
    return transform_values(space, {f.name: column_values(X[f.name]) for f in space.features_}, len(X))


def transform_values(space: FeatureSpace, columns: Mapping[str, list[Any]], m: int) -> FloatArray | None:
    """The encoding of ``m`` rows given as each feature's list of values: each continuous
    value a plain number (not a bool, not NaN), each other value a known category of a
    feature that is not binned; None when a value is anything else."""
    Z = np.zeros((m, space.n_features_out_))
    for f in space.features_:
        values = columns.get(f.name)
        if values is None:
            return None
        if f.encoding == "continuous":
            for r, v in enumerate(values):
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
                        or math.isnan(v):
                    return None
                Z[r, f.columns[0]] = (float(v) - f.low) / (f.high - f.low)
            continue
        if f.edges is not None:
            return None
        lookup = space._lookup(f)
        for r, v in enumerate(values):
            i = lookup.get(_key(v))
            if i is None:
                return None
            if f.encoding == "binary":
                Z[r, f.columns[0]] = i
            else:
                Z[r, f.columns[i]] = 1.0
    return Z
