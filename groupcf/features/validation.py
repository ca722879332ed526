"""Input validation shared by every method: one raw instance."""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..exceptions import InvalidInputError

if TYPE_CHECKING:
    from .space import FeatureSpace

__all__ = ["validate_instance"]


def validate_instance(x: pd.Series | pd.DataFrame, space: FeatureSpace | None = None,
                      columns: Iterable[str] | None = None) -> pd.Series:
    """One raw instance as a Series (from a one-row DataFrame or a Series).

    Every method checks its instance with this; a numpy label (``np.int64(3448)``, as
    ``.iloc`` gives) becomes the plain number.

    Parameters
    ----------
    x : pandas.Series or pandas.DataFrame
        The instance: a Series or a one-row DataFrame of raw features.
    space : FeatureSpace or None, default None
        A fitted :class:`~groupcf.features.space.FeatureSpace`: the instance must encode
        (no NaN, no unknown category, no missing column).
    columns : iterable of str or None, default None
        Feature names the instance must have.

    Returns
    -------
    pandas.Series
        The instance.

    Raises
    ------
    InvalidInputError
        Several rows, not a Series / DataFrame, a missing column, or (with ``space``) a
        value the space cannot encode.

    Examples
    --------
    >>> from groupcf.features import validate_instance
    >>> X = pd.DataFrame({"age": [25, 40], "job": ["a", "b"]}, index=[7, 8])
    >>> validate_instance(X.iloc[[1]])
    age    40
    job     b
    Name: 8, dtype: object
    >>> validate_instance(X)
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: expected one instance (one row: a one-row DataFrame or a Series), got 2 rows
    """
    if isinstance(x, pd.DataFrame):
        if len(x) != 1:
            raise InvalidInputError(
                f"expected one instance (one row: a one-row DataFrame or a Series), got {len(x)} rows")
        x = x.iloc[0]
    if not isinstance(x, pd.Series):
        raise InvalidInputError(f"the instance must be a pandas Series or one-row DataFrame, got {type(x).__name__}")
    if columns is not None:
        missing = [n for n in columns if n not in x.index]
        if missing:
            raise InvalidInputError(f"the instance lacks features {missing}")
    if space is not None:
        space.transform(x)  # raises on NaN / unknown category / missing column
    if isinstance(x.name, np.generic):   # a label read by .iloc: a plain number in every message
        x = x.copy()
        x.name = x.name.item()
    return x
