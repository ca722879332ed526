"""Raw values as the :class:`~groupcf.features.space.FeatureSpace` reads them: lookup and
sort keys of categories, numeric columns with a readable error."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..exceptions import InvalidInputError
from ..utils import FloatArray


def _key(v: object) -> tuple[str, object]:
    """Hashable lookup key that equates 1, 1.0 and np.int64(1) but keeps strings apart."""
    if isinstance(v, (bool, np.bool_)):
        return ("b", bool(v))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return ("n", float(v))
    return ("o", v)


def _sort_key(v: object) -> tuple[int, float, str]:
    return (0, float(v), "") if isinstance(v, (int, float, np.integer, np.floating)) else (1, 0.0, str(v))


def _numbers(col: pd.Series, name: str) -> FloatArray:
    """A numeric column as floats; a value that is not a number is named with its column
    and row (instead of numpy's bare "could not convert string to float")."""
    values: FloatArray       # pandas has no type stubs: to_numpy is Any
    if pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
        values = col.to_numpy(dtype=float)
        return values
    num = pd.to_numeric(col, errors="coerce")
    bad = num.isna() & col.notna()
    if bad.any():
        rows = col.index[bad.to_numpy()]
        label = rows[0].item() if hasattr(rows[0], "item") else rows[0]
        raise InvalidInputError(f"column {name!r} is numeric but row {label!r} holds {col[rows[0]]!r}"
                                + (f" (and {len(rows) - 1} more row(s))" if len(rows) > 1 else ""))
    values = num.to_numpy(dtype=float)
    return values
