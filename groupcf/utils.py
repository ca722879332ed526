"""Neutral helpers shared by every layer: numerical tolerances, value keys, deadlines.

This module sits at the bottom of the import graph (it imports only numpy and the
standard library), so any layer may use it.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

#: an improving column must price above 1 by this much; LP values below it count as 0
EPS = 1e-6
#: two values closer than this are the same value (expanded columns, feature codes)
TOL = 1e-9
#: decimals kept when a float vector becomes a dictionary key
KEY_DECIMALS = 9

#: array types for annotations (the dtype numpy gives: float64 values, int64 indices, bool masks)
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
#: an array whose dtype varies (raw values, categories, or any of the above)
AnyArray = npt.NDArray[Any]


def cells(mask: npt.ArrayLike) -> tuple[IntArray, IntArray]:
    """``np.nonzero`` of a 2-D mask: the same (row, column) index arrays in the same order,
    from one flat search (``np.nonzero`` of a 2-D array takes 3-4 times as long on a few
    hundred rows)."""
    m = np.asarray(mask, dtype=bool)
    if m.ndim != 2:
        raise ValueError(f"cells needs a 2-D mask, got {m.ndim} dimension(s)")
    if m.shape[1] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rows, cols = np.divmod(np.flatnonzero(m), m.shape[1])
    return rows, cols


def value_key(*arrays: object) -> bytes:
    """A hashable key for float vectors, equal for vectors equal to ``KEY_DECIMALS``
    decimals (rounding first, so ``0.1 + 0.2`` and ``0.3`` share a key, as do ``-0.0`` and ``0.0``).
    Boolean arrays are packed bit-wise."""
    parts = []
    for a in arrays:
        a = np.asarray(a)
        if a.dtype == bool:
            parts.append(np.packbits(a).tobytes())
        else:
            parts.append((np.round(a.astype(float), KEY_DECIMALS) + 0.0).tobytes())   # + 0.0: -0.0 -> 0.0
    return b"|".join(parts)


class Deadline:
    """Seconds left of a time budget started at construction (``None``: no limit).

    ``clock`` (default :func:`time.perf_counter`) is what the budget is measured with;
    tests pass a fake one to check that every phase of an algorithm receives what is left.
    """

    def __init__(self, time_limit: float | None, clock: Callable[[], float] = time.perf_counter):
        self._clock = clock
        self.t0 = clock()
        self.limit = time_limit

    def elapsed(self) -> float:
        return self._clock() - self.t0

    def left(self) -> float | None:
        if self.limit is None:
            return None
        return max(0.0, self.limit - self.elapsed())

    @property
    def passed(self) -> bool:
        left = self.left()
        return left is not None and left <= 0.0


def column_values(col: pd.Series) -> list[object]:
    """``col.tolist()``: the column's values as Python objects; a categorical column read
    through its codes and its categories' list (pandas' own ``tolist`` of a categorical
    converts every value through its categories' array, about 8× slower on a few rows)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = col.dtype.categories.tolist()
        return [cats[k] if k >= 0 else np.nan for k in np.asarray(col.array.codes).tolist()]
    values: list[object] = col.tolist()
    return values
