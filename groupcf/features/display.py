"""Values as a person reads them: a binned numeric feature's bin with the real bounds.

A :class:`~groupcf.features.space.FeatureSpace` bins a numeric feature into quantile bins
whose outer edges are ``-inf`` and ``+inf`` (so that every future value falls in one), and a
decoded counterfactual carries the bin itself (a ``pd.Interval``). Shown as is, that reads
``duration -> [-inf, 12.0)``. Here the bin is clipped to the training range the space saw
(``Feature.low`` / ``Feature.high``: training min and max), ``[4, 12)``, the last bin closed
at the maximum (``[24, 72]``), and given a **representative value**: the midpoint of the
clipped bin, for an integer column rounded down to an integer inside the bin
(``[4, 12)`` → 8). It is a readable stand-in, not a value the search chose: any value of
the bin gives the same model input.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from .space import Feature

__all__ = ["bin_bounds", "bin_label", "bin_value", "set_column", "show_value"]


def _num(x: float) -> str:
    """A number as written: ``4`` not ``4.0``, at most 6 significant digits."""
    return f"{x:g}"


def _is_bin(feature: Feature | None, v: Any) -> bool:
    return isinstance(v, pd.Interval) and getattr(feature, "edges", None) is not None


def bin_bounds(feature: Feature, v: pd.Interval) -> tuple[float, float, bool]:
    """``(low, high, closed_right)`` of the bin ``v`` clipped to the feature's training range:
    an infinite edge becomes the training min / max (and the last bin is closed there)."""
    lo = float(v.left) if math.isfinite(v.left) else float(feature.low)
    hi = float(v.right) if math.isfinite(v.right) else float(feature.high)
    closed_right = (not math.isfinite(v.right)) or v.closed in ("right", "both")
    return lo, max(hi, lo), closed_right


def bin_value(feature: Feature, v: pd.Interval) -> float | int:
    """The bin's representative value: the midpoint of the clipped bin (module docstring);
    for an integer column the largest integer not above it, kept inside the bin."""
    lo, hi, closed_right = bin_bounds(feature, v)
    mid = (lo + hi) / 2
    if _integer(feature):
        r = math.floor(mid)
        r = max(r, math.ceil(lo))
        if not closed_right and r >= hi and math.ceil(lo) < hi:
            r = math.ceil(hi) - 1
        return int(r)
    return float(mid)


def bin_label(feature: Feature, v: pd.Interval) -> str:
    """The clipped bin as text: ``"[4, 12)"``, the last one ``"[24, 72]"``."""
    lo, hi, closed_right = bin_bounds(feature, v)
    left = "[" if v.closed in ("left", "both") else "("
    return f"{left}{_num(lo)}, {_num(hi)}{']' if closed_right else ')'}"


def show_value(feature: Feature | None, v: Any) -> str:
    """A value for a table or a summary: a bin as ``"[4, 12) (~8)"`` (label and
    representative value), a number without numpy's wrapper or float noise (``|x| < 1e-9``
    shows as 0), anything else by ``str``."""
    if feature is not None and _is_bin(feature, v):
        lo, hi, _ = bin_bounds(feature, v)
        if lo == hi:          # a bin holding one training value
            return _num(lo)
        return f"{bin_label(feature, v)} (~{_num(bin_value(feature, v))})"
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if abs(x) < 1e-9:
            return "0"
        return _num(x) if x == x else "nan"
    return str(v)


def _integer(feature: Feature) -> bool:
    dtype = getattr(feature, "dtype", None)
    try:
        return dtype is not None and pd.api.types.is_integer_dtype(dtype)
    except TypeError:  # pragma: no cover - exotic dtypes
        return False


def set_column(col: pd.Series, value: Any) -> pd.Series:
    """``col`` with every row set to ``value`` (a categorical column keeps its dtype).

    A bin (``pd.Interval``) set on a numeric column keeps the raw values already inside
    it: that person's model input does not change, so, as everywhere in groupcf, their
    own value stays; the others get the bin itself.

    Parameters
    ----------
    col : pandas.Series
        One raw feature column.
    value : Any
        The value (category, number or bin) every row is set to.

    Returns
    -------
    pandas.Series
        The new column, same index and name.
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        return pd.Series(pd.Categorical([value] * len(col), dtype=col.dtype), index=col.index, name=col.name)
    if isinstance(value, pd.Interval) and pd.api.types.is_numeric_dtype(col.dtype):
        inside = np.array([not pd.isna(x) and x in value for x in col.tolist()], dtype=bool)
        if inside.all():
            return col.copy()
        out = col.astype(object)
        out[~inside] = [value] * int((~inside).sum())
        return out
    out = col.astype(object)
    out[:] = [value] * len(col)
    return out.infer_objects()

